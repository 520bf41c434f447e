#include "CGcryptRSA.h"
#include <gcrypt.h>
#include <pthread.h>
#include <string.h>

static int initialised = 0;

/// libgcrypt initialised once, as its manual asks of a library's user:
/// version check, then INITIALIZATION_FINISHED, unless another part of the
/// process (libsecret) finished it first.
static void initialise(void) {
  if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) { initialised = 1; return; }
  if (gcry_check_version(GCRYPT_VERSION) == NULL) return;
  gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
  initialised = 1;
}

static int ready(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, initialise);
  return initialised;
}

static gcry_mpi_t integer(const uint8_t *bytes, size_t length) {
  gcry_mpi_t value = NULL;
  if (gcry_mpi_scan(&value, GCRYMPI_FMT_USG, bytes, length, NULL) != 0) return NULL;
  return value;
}

/// Writes `value` unsigned big-endian, left-padded to `width` bytes.
static int print(gcry_mpi_t value, size_t width, uint8_t *out, size_t *out_len) {
  size_t length = 0;
  if (width > *out_len || gcry_mpi_print(GCRYMPI_FMT_USG, NULL, 0, &length, value) != 0 || length > width) return -1;
  memset(out, 0, width - length);
  if (gcry_mpi_print(GCRYMPI_FMT_USG, out + (width - length), length, NULL, value) != 0) return -1;
  *out_len = width;
  return 0;
}

int odr_rsa_oaep_encrypt(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                         const uint8_t *label, size_t label_len, const uint8_t *message, size_t message_len,
                         uint8_t *out, size_t *out_len) {
  if (!ready()) return -1;
  int status = -1;
  gcry_mpi_t mn = integer(n, n_len), me = integer(e, e_len), ma = NULL;
  gcry_sexp_t key = NULL, data = NULL, result = NULL, a = NULL;
  if (!mn || !me) goto done;
  if (gcry_sexp_build(&key, NULL, "(public-key (rsa (n %m) (e %m)))", mn, me) != 0) goto done;
  if (gcry_sexp_build(&data, NULL, "(data (flags oaep) (hash-algo sha256) (label %b) (value %b))",
                      (int)label_len, label, (int)message_len, message) != 0) goto done;
  if (gcry_pk_encrypt(&result, data, key) != 0) goto done;
  if (!(a = gcry_sexp_find_token(result, "a", 0)) || !(ma = gcry_sexp_nth_mpi(a, 1, GCRYMPI_FMT_USG))) goto done;
  status = print(ma, (gcry_mpi_get_nbits(mn) + 7) / 8, out, out_len);
done:
  gcry_mpi_release(mn); gcry_mpi_release(me); gcry_mpi_release(ma);
  gcry_sexp_release(key); gcry_sexp_release(data); gcry_sexp_release(result); gcry_sexp_release(a);
  return status;
}

int odr_rsa_oaep_decrypt(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                         const uint8_t *d, size_t d_len, const uint8_t *label, size_t label_len,
                         const uint8_t *ciphertext, size_t ciphertext_len, uint8_t *out, size_t *out_len) {
  if (!ready()) return -1;
  int status = -1;
  gcry_mpi_t mn = integer(n, n_len), me = integer(e, e_len), md = integer(d, d_len), mc = integer(ciphertext, ciphertext_len);
  gcry_sexp_t key = NULL, data = NULL, result = NULL, value = NULL;
  if (!mn || !me || !md || !mc) goto done;
  if (gcry_sexp_build(&key, NULL, "(private-key (rsa (n %m) (e %m) (d %m)))", mn, me, md) != 0) goto done;
  if (gcry_sexp_build(&data, NULL, "(enc-val (flags oaep) (hash-algo sha256) (label %b) (rsa (a %m)))",
                      (int)label_len, label, mc) != 0) goto done;
  if (gcry_pk_decrypt(&result, data, key) != 0) goto done;
  size_t length = 0;
  const char *bytes = NULL;
  if (!(value = gcry_sexp_find_token(result, "value", 0)) || !(bytes = gcry_sexp_nth_data(value, 1, &length)) || length > *out_len) goto done;
  memcpy(out, bytes, length);
  *out_len = length;
  status = 0;
done:
  gcry_mpi_release(mn); gcry_mpi_release(me); gcry_mpi_release(md); gcry_mpi_release(mc);
  gcry_sexp_release(key); gcry_sexp_release(data); gcry_sexp_release(result); gcry_sexp_release(value);
  return status;
}
