#ifndef ODR_CHARDENING_H
#define ODR_CHARDENING_H

/// prctl(PR_SET_DUMPABLE, 0): prctl is variadic, which Swift cannot call.
int odr_set_non_dumpable(void);

/// mallopt(M_MMAP_THRESHOLD, 128 KiB): allocations of 128 KiB and more are
/// mapped and unmapped one by one, whatever glibc's adaptive threshold
/// would do (<malloc.h> is not part of Swift's Glibc module).
int odr_map_large_buffers(void);

/// A new pseudo-terminal pair, both ends close-on-exec and neither the
/// caller's controlling terminal (posix_openpt, grantpt, unlockpt and
/// ptsname_r need _XOPEN_SOURCE, which Swift's Glibc module leaves out).
/// 0 on success, else -1 with errno set.
int odr_open_pseudo_terminal(int *master, int *slave);

/// The path of the slave of the pseudo-terminal `master` (ptsname_r),
/// NUL-terminated in `name`. 0 on success.
int odr_pseudo_terminal_name(int master, char *name, unsigned long length);

/// POSIX_SPAWN_SETSID (a GNU extension Swift's Glibc module leaves out):
/// the child starts a session of its own, before its file actions run.
short odr_posix_spawn_setsid(void);

/// What odr_spawn_guarded reports about the child it started.
enum {
  /// The sandbox could not be made (errno in `error`); the command ran without it.
  odr_guard_no_sandbox = 1,
  /// The command could not be run (errno in `error`); the child exited 127.
  odr_guard_exec_failed = 2,
};

/// Starts `path` for `odr exec --proxy` with fork and execve, the child
/// first: taking SIGKILL when odr dies (PR_SET_PDEATHSIG; it exits at once
/// if odr is already gone), joining a new session keyring (it does not
/// possess odr's kernel keys), and with `sandbox` set, entering new user
/// and mount namespaces where each folder of `hidden_folders` is an empty
/// tmpfs and each file of `hidden_files` (a socket) is /dev/null. Signals
/// are unblocked and at their defaults (SIGPIPE ignored when
/// `ignore_sigpipe`). An execve that fails with ENOEXEC runs the file with
/// /bin/sh, as execvp does. Returns the child's pid, or -1 with errno set
/// when fork failed; `*report` / `*report_errno` say what the child told
/// (0 when all went well). Only async-signal-safe calls run in the child.
int odr_spawn_guarded(const char *path, char *const argv[], char *const envp[], int sandbox,
                      const char *const hidden_folders[], const char *const hidden_files[], int ignore_sigpipe,
                      int *report, int *report_errno);

#endif
