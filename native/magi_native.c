/*
 * The system calls Node does not expose that the daemon needs: the peer credentials of a connected
 * Unix socket, flock(2) for the lifetime lock, _exit(2) for leaving without waiting for a thread
 * blocked in the kernel, prlimit(2) for bounding a command's process before it starts, FD_CLOEXEC for
 * keeping the descriptors the daemon was started with from its children, and a batched statx(2) of a tree
 * of folders for checking a workspace walk against what it found the last time.
 * Failures are thrown as JS errors whose `code` is the errno name and `errno` its number.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <node_api.h>

#define CHECK_NAPI(env, call)                                                                     \
  do {                                                                                            \
    if ((call) != napi_ok) {                                                                      \
      throw_internal(env, #call);                                                                 \
      return NULL;                                                                                \
    }                                                                                             \
  } while (0)

static void throw_internal(napi_env env, const char *what) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, "ERR_MAGI_NATIVE", what);
}

static const char *errno_name(int err) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char *name = strerrorname_np(err);
  if (name != NULL) return name;
#endif
  switch (err) {
    case EBADF: return "EBADF";
    case EINTR: return "EINTR";
    case EINVAL: return "EINVAL";
    case ENOLCK: return "ENOLCK";
    case ENOTSOCK: return "ENOTSOCK";
    case ENOTCONN: return "ENOTCONN";
    case ENOPROTOOPT: return "ENOPROTOOPT";
    case ENOSYS: return "ENOSYS";
    case EFAULT: return "EFAULT";
    case EWOULDBLOCK: return "EWOULDBLOCK";
    default: return "EUNKNOWN";
  }
}

/* Throws `<syscall>: <strerror>` with `.code` the errno name and `.errno` the number. */
static void throw_errno(napi_env env, const char *syscall, int err) {
  char text[160];
  const char *name = errno_name(err);
  snprintf(text, sizeof text, "%s failed: %s (%s)", syscall, strerror(err), name);

  napi_value code, message, error, errno_value, syscall_value;
  if (napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code) != napi_ok ||
      napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &message) != napi_ok ||
      napi_create_error(env, code, message, &error) != napi_ok ||
      napi_create_int32(env, err, &errno_value) != napi_ok ||
      napi_set_named_property(env, error, "errno", errno_value) != napi_ok ||
      napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &syscall_value) != napi_ok ||
      napi_set_named_property(env, error, "syscall", syscall_value) != napi_ok) {
    throw_internal(env, syscall);
    return;
  }
  napi_throw(env, error);
}

/* Reads a non-negative int32 file descriptor; throws a TypeError otherwise. */
static bool fd_argument(napi_env env, napi_value value, int *fd) {
  napi_valuetype type;
  double number;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number ||
      napi_get_value_double(env, value, &number) != napi_ok || number < 0 || number > 2147483647.0 ||
      number != (double)(int)number) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "fd must be a non-negative integer");
    return false;
  }
  *fd = (int)number;
  return true;
}

static bool bool_argument(napi_env env, napi_value value, const char *name, bool *result) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_boolean ||
      napi_get_value_bool(env, value, result) != napi_ok) {
    char text[64];
    snprintf(text, sizeof text, "%s must be a boolean", name);
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", text);
    return false;
  }
  return true;
}

static bool set_int(napi_env env, napi_value object, const char *name, int64_t value) {
  napi_value number;
  return napi_create_int64(env, value, &number) == napi_ok &&
         napi_set_named_property(env, object, name, number) == napi_ok;
}

/* peerCredentials(fd) -> {pid, uid, gid} of the process at the other end of a connected Unix socket. */
static napi_value peer_credentials(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "peerCredentials takes (fd)");
    return NULL;
  }
  int fd;
  if (!fd_argument(env, argv[0], &fd)) return NULL;

#if defined(SO_PEERCRED)
  struct ucred credentials;
  socklen_t length = sizeof credentials;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    throw_errno(env, "getsockopt(SO_PEERCRED)", errno);
    return NULL;
  }
  napi_value result;
  CHECK_NAPI(env, napi_create_object(env, &result));
  if (!set_int(env, result, "pid", credentials.pid) || !set_int(env, result, "uid", credentials.uid) ||
      !set_int(env, result, "gid", credentials.gid)) {
    throw_internal(env, "peerCredentials");
    return NULL;
  }
  return result;
#else
  (void)fd;
  throw_errno(env, "getsockopt(SO_PEERCRED)", ENOSYS);
  return NULL;
#endif
}

/* flock(fd, exclusive, nonBlocking) -> true when locked, false when another holder has it (EWOULDBLOCK). */
static napi_value flock_fd(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 3) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "flock takes (fd, exclusive, nonBlocking)");
    return NULL;
  }
  int fd;
  bool exclusive, non_blocking;
  if (!fd_argument(env, argv[0], &fd) || !bool_argument(env, argv[1], "exclusive", &exclusive) ||
      !bool_argument(env, argv[2], "nonBlocking", &non_blocking)) {
    return NULL;
  }

  int operation = (exclusive ? LOCK_EX : LOCK_SH) | (non_blocking ? LOCK_NB : 0);
  int status;
  do {
    status = flock(fd, operation);
  } while (status != 0 && errno == EINTR);

  napi_value result;
  if (status != 0) {
    if (errno == EWOULDBLOCK) {
      CHECK_NAPI(env, napi_get_boolean(env, false, &result));
      return result;
    }
    throw_errno(env, "flock", errno);
    return NULL;
  }
  CHECK_NAPI(env, napi_get_boolean(env, true, &result));
  return result;
}

/*
 * exitNow(code): ends the process at once. process.exit() joins every worker thread first, and a thread
 * blocked in a filesystem call never returns to be joined; _exit(2) ends every thread with the process.
 */
static napi_value exit_now(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t code = 0;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &code) != napi_ok || code < 0 || code > 255) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "exitNow takes (code) from 0 to 255");
    return NULL;
  }
  _exit(code);
}

/*
 * limitProcess(pid, resource, bytes): sets both the soft and the hard limit of `resource` ("core", "fsize"
 * or "data") of process `pid` to `bytes`. A process cannot raise a hard limit again, nor can its children.
 */
static napi_value limit_process(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t pid = 0;
  char name[16];
  size_t name_length = 0;
  int64_t bytes = -1;
  if (argc < 3 || napi_get_value_int32(env, argv[0], &pid) != napi_ok || pid <= 0 ||
      napi_get_value_string_utf8(env, argv[1], name, sizeof name, &name_length) != napi_ok ||
      napi_get_value_int64(env, argv[2], &bytes) != napi_ok || bytes < 0) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "limitProcess takes (pid, resource, bytes)");
    return NULL;
  }
  int resource;
  if (strcmp(name, "core") == 0) resource = RLIMIT_CORE;
  else if (strcmp(name, "fsize") == 0) resource = RLIMIT_FSIZE;
  else if (strcmp(name, "data") == 0) resource = RLIMIT_DATA;
  else {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "the resource is not core, fsize or data");
    return NULL;
  }
  struct rlimit limit = {.rlim_cur = (rlim_t)bytes, .rlim_max = (rlim_t)bytes};
  if (prlimit((pid_t)pid, resource, &limit, NULL) != 0) {
    throw_errno(env, "prlimit", errno);
    return NULL;
  }
  napi_value result;
  CHECK_NAPI(env, napi_get_undefined(env, &result));
  return result;
}

/* closeOnExec(fd): sets FD_CLOEXEC, so that no child the daemon starts inherits the descriptor. */
static napi_value close_on_exec(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int fd;
  if (argc < 1 || !fd_argument(env, argv[0], &fd)) return NULL;
  int flags = fcntl(fd, F_GETFD);
  if (flags == -1 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == -1) {
    throw_errno(env, "fcntl(F_SETFD)", errno);
    return NULL;
  }
  napi_value result;
  CHECK_NAPI(env, napi_get_undefined(env, &result));
  return result;
}

/* The typed array `value` as `type`, with its element count; throws a TypeError otherwise. */
static bool typed_array_argument(napi_env env, napi_value value, napi_typedarray_type type, const char *name,
                                 void **data, size_t *length) {
  bool is_typed_array = false;
  napi_typedarray_type actual;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array ||
      napi_get_typedarray_info(env, value, &actual, length, data, NULL, NULL) != napi_ok || actual != type) {
    char text[96];
    snprintf(text, sizeof text, "%s is not a typed array of the expected type", name);
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", text);
    return false;
  }
  return true;
}

#define TREE_DEPTH_MAX 255

/* Whether the folder statx found is the one recorded: a folder still, same device, inode and ctime. */
static bool same_folder(const struct statx *found, const uint64_t *expected) {
  const unsigned int needed = STATX_TYPE | STATX_INO | STATX_CTIME;
  if ((found->stx_mask & needed) != needed || !S_ISDIR(found->stx_mode)) return false;
  uint64_t device = (uint64_t)makedev(found->stx_dev_major, found->stx_dev_minor);
  uint64_t ctime_ns = (uint64_t)found->stx_ctime.tv_sec * 1000000000u + (uint64_t)found->stx_ctime.tv_nsec;
  return device == expected[0] && (uint64_t)found->stx_ino == expected[1] && ctime_ns == expected[2];
}

static bool check_folder(int directory_fd, const char *name, int flags, const uint64_t *expected) {
  struct statx found;
  if (statx(directory_fd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
            STATX_TYPE | STATX_INO | STATX_CTIME, &found) != 0) {
    return false;
  }
  return same_folder(&found, expected);
}

/*
 * statTree(rootFd, names, ends, depths, expected, changed) -> count
 * Checks a tree of folders beneath rootFd against what was recorded of each. Node i lies depths[i] levels
 * below the root and is named by the bytes names[ends[i-1] .. ends[i]) (node 0 is the root itself: depth 0,
 * no name); the nodes come in preorder, so a node's parent is the nearest earlier node one level up.
 * expected[3i], [3i+1] and [3i+2] hold the device, inode and ctime in nanoseconds it had. Every node that is
 * gone, no longer a folder or not as recorded has its index written to `changed`, in increasing order, and
 * so has every node below a folder that could not be opened; the count is returned. Each name is looked up
 * in its parent's descriptor, without following a symlink, and a folder that has nodes below it is checked
 * through the descriptor they are looked up in, so what is checked is what is walked.
 */
static napi_value stat_tree(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 6) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE",
                          "statTree takes (rootFd, names, ends, depths, expected, changed)");
    return NULL;
  }
  int root_fd;
  if (!fd_argument(env, argv[0], &root_fd)) return NULL;
  bool is_buffer = false;
  char *names = NULL;
  size_t names_length = 0;
  if (napi_is_buffer(env, argv[1], &is_buffer) != napi_ok || !is_buffer ||
      napi_get_buffer_info(env, argv[1], (void **)&names, &names_length) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "names is not a Buffer");
    return NULL;
  }
  uint32_t *ends;
  uint8_t *depths;
  uint64_t *expected;
  uint32_t *changed;
  size_t ends_length, count, expected_length, changed_length;
  if (!typed_array_argument(env, argv[2], napi_uint32_array, "ends", (void **)&ends, &ends_length) ||
      !typed_array_argument(env, argv[3], napi_uint8_array, "depths", (void **)&depths, &count) ||
      !typed_array_argument(env, argv[4], napi_biguint64_array, "expected", (void **)&expected,
                            &expected_length) ||
      !typed_array_argument(env, argv[5], napi_uint32_array, "changed", (void **)&changed, &changed_length)) {
    return NULL;
  }
  if (count == 0 || ends_length != count || expected_length != 3 * count || changed_length < count ||
      count > UINT32_MAX || depths[0] != 0 || ends[0] != 0) {
    napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "the tree's arrays do not describe one tree");
    return NULL;
  }
  for (size_t i = 1; i < count; i++) {
    size_t start = ends[i - 1];
    if (depths[i] < 1 || depths[i] > depths[i - 1] + 1 || ends[i] <= start || ends[i] > names_length ||
        ends[i] - start > NAME_MAX || memchr(names + start, '/', ends[i] - start) != NULL ||
        memchr(names + start, '\0', ends[i] - start) != NULL) {
      napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "the tree's arrays do not describe one tree");
      return NULL;
    }
  }

  /* held[d]: the descriptor of the folder at depth d on the current path, -1 where it could not be opened. */
  int held[TREE_DEPTH_MAX + 1];
  held[0] = root_fd;
  int deepest = 0;
  uint32_t found = 0;
  if (!check_folder(root_fd, "", AT_EMPTY_PATH, expected)) changed[found++] = 0;
  char name[NAME_MAX + 1];
  for (size_t i = 1; i < count; i++) {
    int depth = depths[i];
    for (; deepest >= depth; deepest--) {
      if (held[deepest] >= 0) close(held[deepest]);
    }
    int parent = held[depth - 1];
    bool has_below = i + 1 < count && depths[i + 1] == depth + 1;
    bool same = false;
    if (parent >= 0) {
      size_t start = ends[i - 1];
      memcpy(name, names + start, ends[i] - start);
      name[ends[i] - start] = '\0';
      if (has_below) {
        int fd;
        do {
          fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        } while (fd < 0 && errno == EINTR);
        held[depth] = fd;
        deepest = depth;
        same = fd >= 0 && check_folder(fd, "", AT_EMPTY_PATH, expected + 3 * i);
      } else {
        same = check_folder(parent, name, 0, expected + 3 * i);
      }
    } else if (has_below) {
      held[depth] = -1;
      deepest = depth;
    }
    if (!same) changed[found++] = (uint32_t)i;
  }
  for (; deepest >= 1; deepest--) {
    if (held[deepest] >= 0) close(held[deepest]);
  }
  napi_value result;
  CHECK_NAPI(env, napi_create_uint32(env, found, &result));
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"peerCredentials", NULL, peer_credentials, NULL, NULL, NULL, napi_enumerable, NULL},
      {"flock", NULL, flock_fd, NULL, NULL, NULL, napi_enumerable, NULL},
      {"exitNow", NULL, exit_now, NULL, NULL, NULL, napi_enumerable, NULL},
      {"limitProcess", NULL, limit_process, NULL, NULL, NULL, napi_enumerable, NULL},
      {"closeOnExec", NULL, close_on_exec, NULL, NULL, NULL, napi_enumerable, NULL},
      {"statTree", NULL, stat_tree, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CHECK_NAPI(env, napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
