/* sha256.h: SHA-256 (FIPS 180-4), for the DSL generator's staleness checks: a sidecar names
 * the hashes of its kernel's source and binary, and schemagen hashes the files it is given to
 * compare. Small and incremental; no I/O. */
#ifndef SG_SHA256_H
#define SG_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sg_sha256 {
    uint32_t      h[8];
    uint64_t      len;     /* bytes hashed so far */
    unsigned char buf[64]; /* the block being filled */
    uint32_t      nbuf;
} sg_sha256;

void sg_sha256_init(sg_sha256 *s);
void sg_sha256_update(sg_sha256 *s, const void *data, size_t n);
/* Writes the 32-byte digest; s must be initialised again before reuse. */
void sg_sha256_final(sg_sha256 *s, unsigned char out[32]);
/* The digest of data as 64 lowercase hex digits and a NUL. */
void sg_sha256_hex(const void *data, size_t n, char out[65]);

#endif
