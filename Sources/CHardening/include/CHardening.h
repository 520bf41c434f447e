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

/// Starts `path` with fork and execve for `odr exec --proxy` (bubblewrap,
/// or the command itself with --no-sandbox), the child first: taking
/// SIGKILL when the thread that forked it ends (PR_SET_PDEATHSIG; it exits
/// at once if odr is already gone), joining a new session keyring (it does
/// not possess odr's kernel keys), with `placed[i]` as its descriptor 3 + i
/// and, unless `error_fd` is -1, `error_fd` as its standard error. Signals
/// are unblocked and at their defaults (SIGPIPE ignored when
/// `ignore_sigpipe`), but the `ignored` ones, ignored. An execve that fails with ENOEXEC runs the file with
/// /bin/sh, as execvp does. Returns the child's pid, or -1 with errno set
/// when fork failed; `*exec_errno` is the errno of a failed execve (the
/// child then exited 127), else 0. Only async-signal-safe calls run in the
/// child.
int odr_spawn_guarded(const char *path, char *const argv[], char *const envp[], const int placed[], int placed_count,
                      int error_fd, int ignore_sigpipe, const int ignored[], int ignored_count, int *exec_errno);

/// The descriptors the sandbox's first process (`odr --sandbox-init`) is
/// given: the socket its message to odr goes on, and the standard error the
/// command gets (its own goes to odr while the sandbox is being made).
enum { odr_sandbox_control_fd = 3, odr_sandbox_error_fd = 4 };

/// `odr --sandbox-init [--default-signals=N,…] ADDRESS:PORT… -- PATH ARG…`,
/// the first process bubblewrap runs inside the sandbox of `odr exec
/// --proxy`: it puts signals N, … back to their default action (odr starts
/// bwrap with the terminal's SIGINT and SIGQUIT ignored, so that Ctrl-C
/// reaches the command, not bwrap's monitor), listens on
/// each ADDRESS:PORT (in the sandbox's own network namespace), sends the
/// listening sockets and its credentials to odr on descriptor 3, takes
/// descriptor 4 as its standard error, closes every other descriptor and
/// executes PATH with the environment it was given. Exits 125 when it
/// cannot listen or send (saying why on its standard error), 126 or 127
/// when PATH cannot be run; returns 2 when not started that way.
int odr_sandbox_init(int argc, char *const argv[]);

/// A socket pair for the sandbox's message: `ends[0]` (odr's) receives
/// credentials, `ends[1]` goes to the sandbox. Both close-on-exec. 0 on
/// success, else -1 with errno set.
int odr_sandbox_control(int ends[2]);

/// Waits up to `timeout_ms` for the sandbox's message on `control`: puts
/// its listening sockets (at most `max`) in `fds` and the pid of the
/// process that becomes the command, in odr's pid namespace, in `*pid`.
/// Returns the number of sockets; 0 when `control` was closed without a
/// message (the sandbox was not made); -1 with errno set on an error,
/// ETIMEDOUT, or EPROTO for a message that is not the sandbox's.
int odr_sandbox_receive(int control, int fds[], int max, int *pid, int timeout_ms);

/// A close-on-exec memory file holding `length` bytes, read from the
/// start (memfd_create): data bubblewrap reads by descriptor. -1 with errno
/// set on failure.
int odr_data_descriptor(const void *bytes, unsigned long length);

/// The seccomp program of the sandbox (classic BPF for this architecture,
/// made by libseccomp: scripts/lib/seccomp-program), `*length` bytes.
const unsigned char *odr_seccomp_program(unsigned long *length);

#endif
