#include "CGcryptRSA.h"
#include <dlfcn.h>
#include <gcrypt.h>
#include <pthread.h>
#include <string.h>

// libgcrypt is loaded (dlopen) the first time an ssh-rsa key is used, not
// when odr starts: gcrypt.h gives the types, and each function is reached
// through this table, each typed as the header declares it.
#define ODR_GCRYPT_FUNCTIONS(X) \
  X(gcry_check_version) X(gcry_control) X(gcry_mpi_get_nbits) X(gcry_mpi_print) X(gcry_mpi_release) \
  X(gcry_mpi_scan) X(gcry_pk_decrypt) X(gcry_pk_encrypt) X(gcry_sexp_build) X(gcry_sexp_find_token) \
  X(gcry_sexp_nth_data) X(gcry_sexp_nth_mpi) X(gcry_sexp_release)

static struct {
#define ODR_FIELD(name) __typeof__(&name) name;
  ODR_GCRYPT_FUNCTIONS(ODR_FIELD)
#undef ODR_FIELD
} gcrypt;

static int initialised = 0;
static const char *missing = NULL;

/// Loads libgcrypt, then initialises it once, as its manual asks of a
/// library's user: version check, then INITIALIZATION_FINISHED, unless
/// another part of the process (libsecret) finished it first.
static void initialise(void) {
  void *library = dlopen("libgcrypt.so.20", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) { missing = strdup(dlerror()); return; }
#define ODR_LOAD(name) \
  if ((gcrypt.name = (__typeof__(gcrypt.name))dlsym(library, #name)) == NULL) { missing = strdup(dlerror()); return; }
  ODR_GCRYPT_FUNCTIONS(ODR_LOAD)
#undef ODR_LOAD
  if (gcrypt.gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) { initialised = 1; return; }
  if (gcrypt.gcry_check_version(GCRYPT_VERSION) == NULL) return;
  gcrypt.gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
  initialised = 1;
}

/// 0 when libgcrypt is ready, else the status to return.
static int ready(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, initialise);
  return initialised ? 0 : (missing ? ODR_GCRYPT_MISSING : -1);
}

const char *odr_gcrypt_missing(void) {
  return missing;
}

static gcry_mpi_t integer(const uint8_t *bytes, size_t length) {
  gcry_mpi_t value = NULL;
  if (gcrypt.gcry_mpi_scan(&value, GCRYMPI_FMT_USG, bytes, length, NULL) != 0) return NULL;
  return value;
}

/// Writes `value` unsigned big-endian, left-padded to `width` bytes.
static int print(gcry_mpi_t value, size_t width, uint8_t *out, size_t *out_len) {
  size_t length = 0;
  if (width > *out_len || gcrypt.gcry_mpi_print(GCRYMPI_FMT_USG, NULL, 0, &length, value) != 0 || length > width) return -1;
  memset(out, 0, width - length);
  if (gcrypt.gcry_mpi_print(GCRYMPI_FMT_USG, out + (width - length), length, NULL, value) != 0) return -1;
  *out_len = width;
  return 0;
}

int odr_rsa_oaep_encrypt(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                         const uint8_t *label, size_t label_len, const uint8_t *message, size_t message_len,
                         uint8_t *out, size_t *out_len) {
  int not_ready = ready();
  if (not_ready) return not_ready;
  int status = -1;
  gcry_mpi_t mn = integer(n, n_len), me = integer(e, e_len), ma = NULL;
  gcry_sexp_t key = NULL, data = NULL, result = NULL, a = NULL;
  if (!mn || !me) goto done;
  if (gcrypt.gcry_sexp_build(&key, NULL, "(public-key (rsa (n %m) (e %m)))", mn, me) != 0) goto done;
  if (gcrypt.gcry_sexp_build(&data, NULL, "(data (flags oaep) (hash-algo sha256) (label %b) (value %b))",
                      (int)label_len, label, (int)message_len, message) != 0) goto done;
  if (gcrypt.gcry_pk_encrypt(&result, data, key) != 0) goto done;
  if (!(a = gcrypt.gcry_sexp_find_token(result, "a", 0)) || !(ma = gcrypt.gcry_sexp_nth_mpi(a, 1, GCRYMPI_FMT_USG))) goto done;
  status = print(ma, (gcrypt.gcry_mpi_get_nbits(mn) + 7) / 8, out, out_len);
done:
  gcrypt.gcry_mpi_release(mn); gcrypt.gcry_mpi_release(me); gcrypt.gcry_mpi_release(ma);
  gcrypt.gcry_sexp_release(key); gcrypt.gcry_sexp_release(data); gcrypt.gcry_sexp_release(result); gcrypt.gcry_sexp_release(a);
  return status;
}

int odr_rsa_oaep_decrypt(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                         const uint8_t *d, size_t d_len, const uint8_t *label, size_t label_len,
                         const uint8_t *ciphertext, size_t ciphertext_len, uint8_t *out, size_t *out_len) {
  int not_ready = ready();
  if (not_ready) return not_ready;
  int status = -1;
  gcry_mpi_t mn = integer(n, n_len), me = integer(e, e_len), md = integer(d, d_len), mc = integer(ciphertext, ciphertext_len);
  gcry_sexp_t key = NULL, data = NULL, result = NULL, value = NULL;
  if (!mn || !me || !md || !mc) goto done;
  if (gcrypt.gcry_sexp_build(&key, NULL, "(private-key (rsa (n %m) (e %m) (d %m)))", mn, me, md) != 0) goto done;
  if (gcrypt.gcry_sexp_build(&data, NULL, "(enc-val (flags oaep) (hash-algo sha256) (label %b) (rsa (a %m)))",
                      (int)label_len, label, mc) != 0) goto done;
  if (gcrypt.gcry_pk_decrypt(&result, data, key) != 0) goto done;
  size_t length = 0;
  const char *bytes = NULL;
  if (!(value = gcrypt.gcry_sexp_find_token(result, "value", 0)) || !(bytes = gcrypt.gcry_sexp_nth_data(value, 1, &length)) || length > *out_len) goto done;
  memcpy(out, bytes, length);
  *out_len = length;
  status = 0;
done:
  gcrypt.gcry_mpi_release(mn); gcrypt.gcry_mpi_release(me); gcrypt.gcry_mpi_release(md); gcrypt.gcry_mpi_release(mc);
  gcrypt.gcry_sexp_release(key); gcrypt.gcry_sexp_release(data); gcrypt.gcry_sexp_release(result); gcrypt.gcry_sexp_release(value);
  return status;
}
