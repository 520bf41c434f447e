#ifndef ODR_CGCRYPTRSA_H
#define ODR_CGCRYPTRSA_H

#include <stddef.h>
#include <stdint.h>

/// What both functions return when libgcrypt could not be loaded
/// (``odr_gcrypt_missing`` says why).
#define ODR_GCRYPT_MISSING (-2)

/// RSA-OAEP with SHA-256 (and MGF1-SHA-256) under `label`, by libgcrypt,
/// loaded (dlopen) on first use: age's ssh-rsa stanza needs the label,
/// which swift-crypto's RSA does not take. Integers are unsigned big-endian.
/// The ciphertext is left-padded to the modulus length (`*out_len` in: the
/// room in `out`; out: the bytes written). Returns 0 on success.
int odr_rsa_oaep_encrypt(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                         const uint8_t *label, size_t label_len, const uint8_t *message, size_t message_len,
                         uint8_t *out, size_t *out_len);

/// The inverse, with the private exponent `d`. Returns 0 on success,
/// non-zero when the ciphertext does not open under this key and label.
int odr_rsa_oaep_decrypt(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                         const uint8_t *d, size_t d_len, const uint8_t *label, size_t label_len,
                         const uint8_t *ciphertext, size_t ciphertext_len, uint8_t *out, size_t *out_len);

/// Why libgcrypt could not be loaded (dlerror's text), or NULL.
const char *odr_gcrypt_missing(void);

#endif
