/* test_cap_cuda.c - GPU memory for capture (label gpu): cudaMalloc through the memory-kind
 * ops, a host-to-device fill read back, the dmabuf export (cuMemGetHandleForAddressRange)
 * that ibv_reg_dmabuf_mr would register, and the error path of `--mem cuda` on a machine
 * without a verbs device (exit 3 naming what is missing). Exits 77 with a message where
 * there is no GPU (CI). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/cap_mem.h"
#include "tests/hs_test.h"

static void test_alloc_fill(void **state)
{
    const size_t len = 1 << 20;
    unsigned char *host = malloc(len), *back = malloc(len);
    void *dev = NULL;
    (void)state;
    assert_non_null(host);
    assert_non_null(back);
    for (size_t i = 0; i < len; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    assert_int_equal(cap_mem_cuda_ops.alloc(len, &dev), HS_OK);
    assert_non_null(dev);
    assert_int_equal(cap_mem_cuda_ops.cpu_visible, 0);
    assert_int_equal(cap_mem_cuda_ops.fill(dev, 0, host, len), HS_OK);
    assert_int_equal(cudaMemcpy(back, dev, len, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(host, back, len);
    cap_mem_cuda_ops.free(dev);
    free(host);
    free(back);
}

static void test_dmabuf_export(void **state)
{
    void *dev = NULL;
    int fd = -1;
    struct stat sb;
    (void)state;
    assert_int_equal(cap_mem_cuda_ops.alloc(4 << 20, &dev), HS_OK);
    assert_int_equal(cap_mem_cuda_dmabuf_fd(dev, 4 << 20, &fd), HS_OK);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &sb), 0); /* a real open file descriptor */
    printf("dmabuf fd %d for a 4 MiB cudaMalloc buffer\n", fd);
    close(fd);
    cap_mem_cuda_ops.free(dev);
}

static void test_cli_no_nic(void **state)
{
    char *out = NULL;
    int rc;
    (void)state;
    rc = hs_test_run(&out, "%s capture bench --device mlx5_0 --sizes 64 --mem cuda --iters 1",
                     hs_test_bin());
    printf("%s", out ? out : "");
    assert_int_equal(rc, 3);
    assert_non_null(strstr(out, "verbs device"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_fill),
        cmocka_unit_test(test_dmabuf_export),
        cmocka_unit_test(test_cli_no_nic),
    };
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);

    if (ce != cudaSuccess || n == 0) {
        printf("test_cap_cuda: SKIP: no CUDA GPU here (%s); run it on a GPU machine\n",
               ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
