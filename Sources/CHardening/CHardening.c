#define _GNU_SOURCE
#include "CHardening.h"
#include <malloc.h>
#include <sys/prctl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <spawn.h>
#include <unistd.h>

int odr_set_non_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int odr_map_large_buffers(void) {
  return mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

int odr_open_pseudo_terminal(int *master, int *slave) {
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return -1;
  char name[128];
  if (grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, name, sizeof name) != 0) {
    int saved = errno;
    close(m);
    errno = saved;
    return -1;
  }
  int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) {
    int saved = errno;
    close(m);
    errno = saved;
    return -1;
  }
  *master = m;
  *slave = s;
  return 0;
}

int odr_pseudo_terminal_name(int master, char *name, unsigned long length) {
  return ptsname_r(master, name, length);
}

short odr_posix_spawn_setsid(void) {
  return POSIX_SPAWN_SETSID;
}

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/// `value` in decimal into `buffer` (at least 12 bytes), NUL-terminated; its length.
static int odr_decimal(unsigned int value, char *buffer) {
  char digits[12];
  int count = 0;
  do { digits[count++] = (char)('0' + value % 10); value /= 10; } while (value > 0);
  for (int i = 0; i < count; i++) buffer[i] = digits[count - 1 - i];
  buffer[count] = 0;
  return count;
}

/// Writes `text` to the file at `path` (async-signal-safe); 0 on success.
static int odr_write_file(const char *path, const char *text, int length) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int written = (int)write(fd, text, (size_t)length);
  close(fd);
  return written == length ? 0 : -1;
}

/// A new user and mount namespace, the caller's ids mapped to themselves;
/// 0 on success, else -1 with errno set.
static int odr_new_namespaces(uid_t uid, gid_t gid) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return -1;
  char line[40];
  int n = odr_decimal(uid, line);
  line[n++] = ' ';
  n += odr_decimal(uid, line + n);
  line[n++] = ' '; line[n++] = '1'; line[n++] = '\n';
  if (odr_write_file("/proc/self/setgroups", "deny", 4) != 0 && errno != ENOENT) return -1;
  if (odr_write_file("/proc/self/uid_map", line, n) != 0) return -1;
  n = odr_decimal(gid, line);
  line[n++] = ' ';
  n += odr_decimal(gid, line + n);
  line[n++] = ' '; line[n++] = '1'; line[n++] = '\n';
  return odr_write_file("/proc/self/gid_map", line, n);
}

/// The hidden paths covered in namespaces of their own; then namespaces
/// nested once more, so the covering mounts are locked (a process inside
/// cannot unmount them, whatever capabilities it has there). 0 on success,
/// else -1 with errno set.
static int odr_enter_sandbox(uid_t uid, gid_t gid, const char *const folders[], const char *const files[]) {
  if (odr_new_namespaces(uid, gid) != 0) return -1;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
  for (int i = 0; folders && folders[i]; i++) {
    if (mount("odr-hidden", folders[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=700") != 0 && errno != ENOENT) return -1;
  }
  for (int i = 0; files && files[i]; i++) {
    if (mount("/dev/null", files[i], NULL, MS_BIND, NULL) != 0 && errno != ENOENT) return -1;
  }
  return odr_new_namespaces(uid, gid);
}

int odr_spawn_guarded(const char *path, char *const argv[], char *const envp[], int sandbox,
                      const char *const hidden_folders[], const char *const hidden_files[], int ignore_sigpipe,
                      int *report, int *report_errno) {
  *report = 0;
  *report_errno = 0;
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return -1;
  pid_t parent = getpid();
  uid_t uid = getuid();
  gid_t gid = getgid();
  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    close(ends[0]);
    close(ends[1]);
    errno = saved;
    return -1;
  }
  if (pid == 0) {
    close(ends[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(128 + SIGKILL);
    syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, (char *)0);
    if (sandbox && odr_enter_sandbox(uid, gid, hidden_folders, hidden_files) != 0) {
      int record[2] = {odr_guard_no_sandbox, errno};
      (void)!write(ends[1], record, sizeof record);
    }
    struct sigaction action;
    for (int signal = 1; signal < NSIG; signal++) {
      if (signal == SIGKILL || signal == SIGSTOP) continue;
      sigaction(signal, NULL, &action);
      if (action.sa_handler != SIG_IGN || signal == SIGPIPE) {
        action.sa_handler = (signal == SIGPIPE && ignore_sigpipe) ? SIG_IGN : SIG_DFL;
        action.sa_flags = 0;
        sigemptyset(&action.sa_mask);
        sigaction(signal, &action, NULL);
      }
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, envp);
    if (errno == ENOEXEC) {
      int count = 0;
      while (argv[count]) count++;
      char *shell[count + 2];
      shell[0] = "/bin/sh";
      shell[1] = (char *)path;
      for (int i = 1; i <= count; i++) shell[i + 1] = argv[i];
      execve("/bin/sh", shell, envp);
    }
    int record[2] = {odr_guard_exec_failed, errno};
    (void)!write(ends[1], record, sizeof record);
    _exit(127);
  }
  close(ends[1]);
  int record[2];
  for (;;) {
    ssize_t got = read(ends[0], record, sizeof record);
    if (got < 0 && errno == EINTR) continue;
    if (got != (ssize_t)sizeof record) break;
    if (record[0] == odr_guard_no_sandbox && *report == 0) { *report = record[0]; *report_errno = record[1]; }
    if (record[0] == odr_guard_exec_failed) { *report = record[0]; *report_errno = record[1]; }
  }
  close(ends[0]);
  return pid;
}
