#define _GNU_SOURCE
#include "CHardening.h"
#include "SeccompProgram.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

enum { odr_sandbox_most_listeners = 64 };

const unsigned char *odr_seccomp_program(unsigned long *length) {
  *length = sizeof odr_seccomp_bytes;
  return odr_seccomp_bytes;
}

int odr_data_descriptor(const void *bytes, unsigned long length) {
  int fd = memfd_create("odr-sandbox", MFD_CLOEXEC);
  if (fd < 0) return -1;
  const char *next = bytes;
  while (length > 0) {
    ssize_t written = write(fd, next, length);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      int saved = errno;
      close(fd);
      errno = saved;
      return -1;
    }
    next += written;
    length -= (unsigned long)written;
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int odr_sandbox_control(int ends[2]) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) return -1;
  int on = 1;
  if (setsockopt(ends[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
    int saved = errno;
    close(ends[0]);
    close(ends[1]);
    errno = saved;
    return -1;
  }
  return 0;
}

/// Says why the sandbox's first process stops, on its standard error
/// (bubblewrap's, which odr reads when the sandbox fails), and exits.
static void odr_sandbox_fail(const char *what, const char *detail, int code) {
  fprintf(stderr, "%s: %s\n", what, detail);
  _exit(code);
}

/// A listening TCP socket on `address` (`a.b.c.d:port`), or -1.
static int odr_sandbox_listen(const char *address) {
  char host[INET_ADDRSTRLEN];
  const char *colon = strrchr(address, ':');
  if (!colon || (size_t)(colon - address) >= sizeof host) { errno = EINVAL; return -1; }
  memcpy(host, address, (size_t)(colon - address));
  host[colon - address] = 0;
  char *end;
  long port = strtol(colon + 1, &end, 10);
  struct sockaddr_in where = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  if (*end || port < 1 || port > 65535 || inet_pton(AF_INET, host, &where.sin_addr) != 1) { errno = EINVAL; return -1; }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 || bind(fd, (struct sockaddr *)&where, sizeof where) != 0 ||
      listen(fd, SOMAXCONN) != 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int odr_sandbox_init(int argc, char *const argv[]) {
  int first = 2;
  const char *defaults = "--default-signals=";
  if (argc > first && strncmp(argv[first], defaults, strlen(defaults)) == 0) {
    for (const char *next = argv[first] + strlen(defaults); *next;) {
      char *end;
      long number = strtol(next, &end, 10);
      if (end == next || number < 1 || number >= NSIG) break;
      struct sigaction action = {.sa_handler = SIG_DFL};
      sigemptyset(&action.sa_mask);
      sigaction((int)number, &action, NULL);
      next = *end == ',' ? end + 1 : end;
    }
    first++;
  }
  int split = -1;
  for (int i = first; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) { split = i; break; }
  }
  int count = split - first;
  if (split < 0 || split + 1 >= argc || count < 1 || count > odr_sandbox_most_listeners) {
    fprintf(stderr, "odr --sandbox-init is started by odr exec --proxy, inside its sandbox, not by hand\n");
    return 2;
  }
  int listeners[odr_sandbox_most_listeners];
  for (int i = 0; i < count; i++) {
    listeners[i] = odr_sandbox_listen(argv[first + i]);
    if (listeners[i] < 0) odr_sandbox_fail(argv[first + i], strerror(errno), 125);
  }
  // One message: a byte, the listening sockets, and this process's
  // credentials, whose pid the kernel gives odr in its own pid namespace.
  char byte = 'R';
  struct iovec vector = {.iov_base = &byte, .iov_len = 1};
  union {
    char buffer[CMSG_SPACE(sizeof(int) * odr_sandbox_most_listeners) + CMSG_SPACE(sizeof(struct ucred))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer,
                           .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count) + CMSG_SPACE(sizeof(struct ucred))};
  struct cmsghdr *rights = CMSG_FIRSTHDR(&message);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
  memcpy(CMSG_DATA(rights), listeners, sizeof(int) * (size_t)count);
  struct cmsghdr *credentials = CMSG_NXTHDR(&message, rights);
  credentials->cmsg_level = SOL_SOCKET;
  credentials->cmsg_type = SCM_CREDENTIALS;
  credentials->cmsg_len = CMSG_LEN(sizeof(struct ucred));
  struct ucred own = {.pid = getpid(), .uid = getuid(), .gid = getgid()};
  memcpy(CMSG_DATA(credentials), &own, sizeof own);
  ssize_t sent;
  do sent = sendmsg(odr_sandbox_control_fd, &message, MSG_NOSIGNAL); while (sent < 0 && errno == EINTR);
  if (sent != 1) odr_sandbox_fail("the sandbox's message to odr", strerror(errno), 125);
  // The command gets odr's standard error and no other descriptor.
  if (dup2(odr_sandbox_error_fd, STDERR_FILENO) < 0) odr_sandbox_fail("the command's standard error", strerror(errno), 125);
  close_range(3, ~0U, 0);
  char *const *command = argv + split + 1;
  execv(command[0], command);
  if (errno == ENOEXEC) {
    int arguments = argc - split - 1;
    char *shell[arguments + 2];
    shell[0] = "/bin/sh";
    for (int i = 0; i < arguments; i++) shell[i + 1] = command[i];
    shell[arguments + 1] = NULL;
    execv("/bin/sh", shell);
  }
  int code = errno == ENOENT || errno == ENOTDIR ? 127 : 126;
  fprintf(stderr, "odr: %s: %s inside the sandbox%s\n", command[0], strerror(errno),
          code == 127 ? " (it sees your home as the sandbox's own: --allow-read shows a folder of it)" : "");
  _exit(code);
}

int odr_sandbox_receive(int control, int fds[], int max, int *pid, int timeout_ms) {
  struct pollfd ready = {.fd = control, .events = POLLIN};
  int polled;
  do polled = poll(&ready, 1, timeout_ms); while (polled < 0 && errno == EINTR);
  if (polled < 0) return -1;
  if (polled == 0) { errno = ETIMEDOUT; return -1; }
  char byte;
  struct iovec vector = {.iov_base = &byte, .iov_len = 1};
  union {
    char buffer[CMSG_SPACE(sizeof(int) * odr_sandbox_most_listeners) + CMSG_SPACE(sizeof(struct ucred))];
    struct cmsghdr align;
  } space;
  struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = space.buffer, .msg_controllen = sizeof space.buffer};
  ssize_t got;
  do got = recvmsg(control, &message, MSG_CMSG_CLOEXEC); while (got < 0 && errno == EINTR);
  if (got <= 0) return (int)got;
  int count = 0;
  *pid = 0;
  for (struct cmsghdr *part = CMSG_FIRSTHDR(&message); part; part = CMSG_NXTHDR(&message, part)) {
    if (part->cmsg_level != SOL_SOCKET) continue;
    if (part->cmsg_type == SCM_RIGHTS) {
      int received = (int)((part->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < received; i++) {
        int fd;
        memcpy(&fd, CMSG_DATA(part) + sizeof(int) * (size_t)i, sizeof fd);
        if (count < max) fds[count++] = fd; else close(fd);
      }
    } else if (part->cmsg_type == SCM_CREDENTIALS) {
      struct ucred sender;
      memcpy(&sender, CMSG_DATA(part), sizeof sender);
      *pid = sender.pid;
    }
  }
  if ((message.msg_flags & MSG_CTRUNC) || byte != 'R' || *pid <= 0) {
    for (int i = 0; i < count; i++) close(fds[i]);
    errno = EPROTO;
    return -1;
  }
  return count;
}
