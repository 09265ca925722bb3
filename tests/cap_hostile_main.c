/* cap_hostile_main.c - the cap_hostile tool, for the soft-RoCE VM (tests/vm/capture-hostile.sh):
 *   cap_hostile cases HOST PORT TOKEN     every hostile case of cap_hostile.h against a
 *                                         --server: prints "ok NAME" or "FAIL NAME: why";
 *                                         exit 0 when the server refused each as expected
 *   cap_hostile silent HOST PORT SECONDS  dial and say nothing for SECONDS; exit 0 when the
 *                                         server closed the connection by then
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/cap_hostile.h"

static int run_cases(const char *host, uint16_t port, const char *token)
{
    char err[256];
    int failed = 0;

    for (size_t i = 0; i < hostile_ncases; i++) {
        const hostile_case_t *c = &hostile_cases[i];
        if (hostile_run(c, host, port, token, 10000, err, sizeof(err)) == 0) {
            printf("ok %s\n", c->name);
        } else {
            printf("FAIL %s: %s\n", c->name, err);
            failed = 1;
        }
        fflush(stdout);
    }
    return failed;
}

static int run_silent(const char *host, uint16_t port, int seconds)
{
    int fd = hostile_silent(host, port);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b;

    if (fd < 0) {
        printf("FAIL silent: cannot connect\n");
        return 1;
    }
    if (poll(&p, 1, seconds * 1000) == 1 && recv(fd, &b, 1, 0) <= 0) {
        printf("ok silent: the server closed the connection\n");
        close(fd);
        return 0;
    }
    printf("FAIL silent: still open after %d s\n", seconds);
    close(fd);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "cases") == 0)
        return run_cases(argv[2], (uint16_t)atoi(argv[3]), argv[4]);
    if (argc == 5 && strcmp(argv[1], "silent") == 0)
        return run_silent(argv[2], (uint16_t)atoi(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: cap_hostile cases HOST PORT TOKEN | silent HOST PORT SECONDS\n");
    return 2;
}
