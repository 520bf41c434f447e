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

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int odr_spawn_guarded(const char *path, char *const argv[], char *const envp[], const int placed[], int placed_count,
                      int error_fd, int ignore_sigpipe, const int ignored[], int ignored_count, int *exec_errno) {
  *exec_errno = 0;
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return -1;
  pid_t parent = getpid();
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
    // Out of the way first (a descriptor may already be one of 3 + i),
    // then in place; dup2 leaves the placed ones open across execve.
    int moved[placed_count + 1];
    for (int i = 0; i < placed_count; i++) moved[i] = fcntl(placed[i], F_DUPFD_CLOEXEC, 3 + placed_count);
    int error_moved = error_fd >= 0 ? fcntl(error_fd, F_DUPFD_CLOEXEC, 3 + placed_count) : -1;
    for (int i = 0; i < placed_count; i++) {
      if (moved[i] < 0 || dup2(moved[i], 3 + i) < 0) goto failed;
    }
    if (error_fd >= 0 && (error_moved < 0 || dup2(error_moved, STDERR_FILENO) < 0)) goto failed;
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
    for (int i = 0; i < ignored_count; i++) {
      action.sa_handler = SIG_IGN;
      action.sa_flags = 0;
      sigemptyset(&action.sa_mask);
      sigaction(ignored[i], &action, NULL);
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
  failed:;
    int code = errno;
    (void)!write(ends[1], &code, sizeof code);
    _exit(127);
  }
  close(ends[1]);
  int code = 0;
  ssize_t got;
  do got = read(ends[0], &code, sizeof code); while (got < 0 && errno == EINTR);
  if (got == (ssize_t)sizeof code) *exec_errno = code;
  close(ends[0]);
  return pid;
}
