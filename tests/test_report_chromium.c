/* test_report_chromium.c - report.html rendered by headless Chromium (Debian chromium):
 * every <img> decodes (naturalWidth > 0, read back from the DOM after load) and the
 * screenshot is not blank (decoded here with zlib: enough non-background pixels and
 * colours). Exits 77 when chromium or gnuplot is not installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/hs_util.h"
#include "plots/plot_gnuplot.h"
#include "plots/report_html.h"
#include "tests/hs_test.h"
#include "tests/test_plot_fixture.h"

static char g_chromium[256];

#define CHROMIUM_FLAGS                                                                       \
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "                   \
    "--disable-background-networking --disable-component-update --disable-sync"

static const char g_check_js[] =
    "<script>window.addEventListener('load', function () {"
    " var imgs = document.querySelectorAll('img'), ok = 0;"
    " imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });"
    " var p = document.createElement('pre'); p.id = 'imgcheck';"
    " p.textContent = 'IMGCHECK images=' + imgs.length + ' loaded=' + ok + ' END';"
    " document.body.appendChild(p); });</script>\n</body>";

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undo the PNG row filters in place; raw holds h rows of 1 + stride bytes. */
static int unfilter(unsigned char *raw, uint32_t h, size_t stride, size_t bpp)
{
    for (uint32_t y = 0; y < h; y++) {
        unsigned char *row = raw + y * (stride + 1), *cur = row + 1;
        const unsigned char *up = y ? cur - (stride + 1) : NULL;
        for (size_t x = 0; x < stride; x++) {
            int a = x >= bpp ? cur[x - bpp] : 0, b = up ? up[x] : 0;
            int c = up && x >= bpp ? up[x - bpp] : 0;
            switch (row[0]) {
            case 0: break;
            case 1: cur[x] = (unsigned char)(cur[x] + a); break;
            case 2: cur[x] = (unsigned char)(cur[x] + b); break;
            case 3: cur[x] = (unsigned char)(cur[x] + (a + b) / 2); break;
            case 4: cur[x] = (unsigned char)(cur[x] + paeth(a, b, c)); break;
            default: return -1;
            }
        }
    }
    return 0;
}

/* Decode an 8-bit RGB/RGBA PNG; report the fraction of pixels that differ from the top-left
 * one and a count of distinct colours (capped). Returns 0 on success. */
static int png_stats(const char *path, double *nonbg_frac, unsigned *ncolours)
{
    char *file = NULL;
    size_t len = 0, pos = 8, idat_len = 0, bpp, stride;
    unsigned char *idat = NULL, *raw = NULL, *f;
    uint32_t w = 0, h = 0, seen[64];
    uLongf rawlen;
    int rc = -1;

    if (hs_read_file(path, &file, &len) != HS_OK || len < 33 || memcmp(file, "\x89PNG", 4))
        goto out;
    f = (unsigned char *)file;
    w = be32(f + 16);
    h = be32(f + 20);
    if (f[24] != 8 || (f[25] != 2 && f[25] != 6) || f[28] != 0)
        goto out; /* only 8-bit RGB(A), not interlaced */
    bpp = f[25] == 6 ? 4 : 3;
    stride = (size_t)w * bpp;
    idat = malloc(len);
    while (pos + 12 <= len) {
        uint32_t clen = be32(f + pos);
        if (pos + 12 + clen > len)
            goto out;
        if (memcmp(f + pos + 4, "IDAT", 4) == 0) {
            memcpy(idat + idat_len, f + pos + 8, clen);
            idat_len += clen;
        }
        pos += 12 + clen;
    }
    rawlen = (uLongf)(h * (stride + 1));
    raw = malloc(rawlen);
    if (uncompress(raw, &rawlen, idat, idat_len) != Z_OK || rawlen != h * (stride + 1) ||
        unfilter(raw, h, stride, bpp) != 0)
        goto out;
    {
        const unsigned char *bg = raw + 1;
        size_t nonbg = 0;
        *ncolours = 0;
        for (uint32_t y = 0; y < h; y++) {
            const unsigned char *row = raw + y * (stride + 1) + 1;
            for (uint32_t x = 0; x < w; x++) {
                const unsigned char *px = row + x * bpp;
                uint32_t col = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
                unsigned k;
                nonbg += memcmp(px, bg, 3) != 0;
                for (k = 0; k < *ncolours && seen[k] != col; k++)
                    ;
                if (k == *ncolours && *ncolours < 64)
                    seen[(*ncolours)++] = col;
            }
        }
        *nonbg_frac = (double)nonbg / ((double)w * h);
    }
    rc = 0;
out:
    free(raw);
    free(idat);
    free(file);
    return rc;
}

static void make_check_page(const char *dir)
{
    char path[4096], *html = NULL, *end;
    size_t len;
    FILE *fp;

    snprintf(path, sizeof(path), "%s/report.html", dir);
    assert_int_equal(hs_read_file(path, &html, &len), HS_OK);
    end = strstr(html, "</body>");
    assert_non_null(end);
    snprintf(path, sizeof(path), "%s/check.html", dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "%.*s%s%s", (int)(end - html), html, g_check_js, end + strlen("</body>"));
    fclose(fp);
    free(html);
}

static void test_render(void **state)
{
    fixture_t *f = fixture_new(1);
    char *dir = hs_test_tmpdir(), *out = NULL, shot[4096];
    double frac = 0;
    unsigned ncol = 0;
    int images = -1, loaded = -1;
    (void)state;
    assert_int_equal(rep_write_report(dir, &f->in), HS_OK);
    make_check_page(dir);
    assert_int_equal(hs_test_run(&out, "cd '%s' && timeout 120 %s " CHROMIUM_FLAGS
                                 " --user-data-dir='%s/prof1' --virtual-time-budget=5000"
                                 " --dump-dom 'file://%s/check.html' 2>/dev/null",
                                 dir, g_chromium, dir, dir), 0);
    /* the <pre> the script appended after load (not the script's own text) */
    assert_non_null(strstr(out, "<pre id=\"imgcheck\">IMGCHECK"));
    assert_int_equal(sscanf(strstr(out, "<pre id=\"imgcheck\">"),
                            "<pre id=\"imgcheck\">IMGCHECK images=%d loaded=%d", &images,
                            &loaded), 2);
    assert_int_equal(images, 8);
    assert_int_equal(loaded, 8);
    free(out);
    snprintf(shot, sizeof(shot), "%s/shot.png", dir);
    assert_int_equal(hs_test_run(NULL, "cd '%s' && timeout 120 %s " CHROMIUM_FLAGS
                                 " --user-data-dir='%s/prof2' --hide-scrollbars"
                                 " --screenshot='%s' --window-size=1200,3000"
                                 " 'file://%s/report.html'", dir, g_chromium, dir, shot, dir), 0);
    assert_int_equal(png_stats(shot, &frac, &ncol), 0);
    fprintf(stderr, "screenshot: %.1f%% non-background pixels, %u+ colours\n", frac * 100, ncol);
    assert_true(frac > 0.03);
    assert_true(ncol >= 16);
    if (!getenv("HINTSIM_KEEP_TMP"))
        hs_test_run(NULL, "rm -rf '%s'", dir);
    else
        fprintf(stderr, "kept %s\n", dir);
    free(dir);
    fixture_free(f);
}

/* A page with nothing on it must fail the blank check (the check can fail). */
static void test_blank_detected(void **state)
{
    char *dir = hs_test_tmpdir(), path[4096];
    double frac = 1;
    unsigned ncol = 0;
    (void)state;
    snprintf(path, sizeof(path), "%s/blank.html", dir);
    assert_int_equal(hs_write_file_atomic(path, "<html><body></body></html>\n"), HS_OK);
    assert_int_equal(hs_test_run(NULL, "cd '%s' && timeout 120 %s " CHROMIUM_FLAGS
                                 " --user-data-dir='%s/prof' --hide-scrollbars"
                                 " --screenshot='%s/b.png' --window-size=1200,3000"
                                 " 'file://%s'", dir, g_chromium, dir, dir, path), 0);
    snprintf(path, sizeof(path), "%s/b.png", dir);
    assert_int_equal(png_stats(path, &frac, &ncol), 0);
    assert_true(frac < 0.03);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

/* A page whose image cannot be decoded must fail the image check (the check can fail). */
static void test_broken_image_detected(void **state)
{
    char *dir = hs_test_tmpdir(), path[4096], *out = NULL;
    int images = -1, loaded = -1;
    (void)state;
    snprintf(path, sizeof(path), "%s/report.html", dir);
    assert_int_equal(hs_write_file_atomic(path, "<html><body><img src=\"data:image/png;base64,"
                                          "AAAA\"><img src=\"nothere.png\"></body></html>\n"),
                     HS_OK);
    make_check_page(dir);
    assert_int_equal(hs_test_run(&out, "cd '%s' && timeout 120 %s " CHROMIUM_FLAGS
                                 " --user-data-dir='%s/prof' --virtual-time-budget=5000"
                                 " --dump-dom 'file://%s/check.html' 2>/dev/null",
                                 dir, g_chromium, dir, dir), 0);
    assert_non_null(strstr(out, "<pre id=\"imgcheck\">"));
    assert_int_equal(sscanf(strstr(out, "<pre id=\"imgcheck\">"),
                            "<pre id=\"imgcheck\">IMGCHECK images=%d loaded=%d", &images,
                            &loaded), 2);
    assert_int_equal(images, 2);
    assert_int_equal(loaded, 0);
    free(out);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

static int find_chromium(void)
{
    const char *env = getenv("HINTSIM_CHROMIUM");
    char *out = NULL;
    int rc;

    if (env && *env) {
        snprintf(g_chromium, sizeof(g_chromium), "%s", env);
        return 1;
    }
    rc = hs_test_run(&out, "command -v chromium || command -v chromium-browser");
    if (rc == 0 && out) {
        out[strcspn(out, "\n")] = '\0';
        snprintf(g_chromium, sizeof(g_chromium), "%s", out);
    }
    free(out);
    return rc == 0;
}

int main(void)
{
    char gp[4096];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_blank_detected),
        cmocka_unit_test(test_broken_image_detected),
    };

    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK || !find_chromium()) {
        fprintf(stderr, "test_report_chromium: needs gnuplot and chromium "
                        "(apt-get install gnuplot-nox chromium)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
