/* test_dsl_sha256.c: gen/sha256.c against FIPS 180-4's and NIST's known answers, including
 * inputs that end at, just before and just after a block's padding boundary, and the same
 * bytes fed in uneven pieces. */
#include "check.h"

#include "../../gen/sha256.h"

static void hex_of(const char *s, size_t n, char out[65]) { sg_sha256_hex(s, n, out); }

int main(void) {
    char h[65];
    hex_of("", 0, h);
    CHECK_STR(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, h);
    CHECK_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes */
    hex_of(two, strlen(two), h);
    CHECK_STR(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                       "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"; /* 112 bytes */
    hex_of(four, strlen(four), h);
    CHECK_STR(h, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* a million 'a's, in pieces of 7 bytes (not a divisor of the block) */
    sg_sha256 s;
    sg_sha256_init(&s);
    char as[7];
    memset(as, 'a', sizeof as);
    size_t left = 1000000;
    while (left) {
        size_t k = left < 7 ? left : 7;
        sg_sha256_update(&s, as, k);
        left -= k;
    }
    unsigned char d[32];
    sg_sha256_final(&s, d);
    static const unsigned char million[32] = {
        0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
        0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};
    CHECK(memcmp(d, million, 32) == 0);
    /* 55, 56, 63 and 64 bytes: the padding boundaries give the same digest in one piece and
     * byte by byte */
    char buf[64];
    memset(buf, 'x', sizeof buf);
    size_t lens[] = {55, 56, 63, 64};
    for (size_t i = 0; i < 4; i++) {
        char one[65], bytes[65];
        hex_of(buf, lens[i], one);
        sg_sha256_init(&s);
        for (size_t k = 0; k < lens[i]; k++) sg_sha256_update(&s, buf + k, 1);
        sg_sha256_final(&s, d);
        for (int k = 0; k < 32; k++) snprintf(bytes + 2 * k, 3, "%02x", d[k]);
        CHECK_STR(one, bytes);
    }
    return check_result("test_dsl_sha256");
}
