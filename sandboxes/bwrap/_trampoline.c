/* bwrap-exec-trampoline: the persistent jail's exec server starts every command through this.
 *
 *     bwrap-exec-trampoline UID GID ERRFD -- ARGV_0 ARGV_1 ...
 *
 * Why it exists: the server (Python) can only change a child's uid in a full fork(), which costs
 * ~1-2 ms on a VM; CPython's vfork path refuses user=/group=. So the server vforks this binary with
 * CAP_SETUID/SETGID/SETPCAP as *ambient* capabilities of the spawning thread (see _server.py), and
 * the binary drops to the sample's uid, empties every capability set and execs the command.
 *
 * It is freestanding (no libc, no dynamic loader): nothing in the caller's environment (LD_PRELOAD,
 * GLIBC_TUNABLES, ...) is read while it still holds capabilities; the environment is handed to the
 * command untouched. Every step is checked: if any drop fails, the command is never executed.
 *
 * The order keeps the process out of the sample's reach for as long as it holds a capability: its
 * real and saved uids stay the server's (the kernel lets a process signal or trace another only
 * when one of those is its own) until every set is empty.
 *   ERRFD close-on-exec; setgroups(0); setresgid(GID x3); empty the bounding set; clear the
 *   ambient set; setresuid(-1, UID, -1) (effective uid only); capset(0, 0, 0); setresuid(UID x3)
 *   (needs no capability: UID is already one of its uids); then execve ARGV_0, searched on the
 *   environment's PATH as CPython does when ARGV_0 has no '/' (PATH unset: /bin:/usr/bin).
 * On failure it writes 8 bytes to ERRFD, the step (int32) and errno (int32), and exits 127; the
 * server turns them into the same error a failed Popen gives. On success ERRFD closes with the exec.
 */

#if defined(__x86_64__)
enum { SYS_write = 1, SYS_fcntl = 72, SYS_setgroups = 116, SYS_setresuid = 117,
       SYS_setresgid = 119, SYS_capset = 126, SYS_prctl = 157, SYS_execve = 59,
       SYS_exit_group = 231 };
__asm__(".text\n.global _start\n_start:\n xor %rbp,%rbp\n mov %rsp,%rdi\n and $-16,%rsp\n"
        " call trampoline_main\n hlt\n");
static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
enum { SYS_write = 64, SYS_fcntl = 25, SYS_setgroups = 159, SYS_setresuid = 147,
       SYS_setresgid = 149, SYS_capset = 91, SYS_prctl = 167, SYS_execve = 221,
       SYS_exit_group = 94 };
__asm__(".text\n.global _start\n_start:\n mov x0, sp\n and sp, x0, #-16\n bl trampoline_main\n"
        " brk #0\n");
static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#else
#error "bwrap-exec-trampoline: x86_64 and aarch64 only (the server falls back to fork elsewhere)"
#endif

#define F_SETFD 2
#define FD_CLOEXEC 1
#define PR_CAPBSET_DROP 24
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#define EINVAL 22
#define ENOENT 2
#define ENOTDIR 20
#define ENAMETOOLONG 36

/* the step a failure is reported with (the server's _server.py knows them by number) */
enum { STEP_ARGS = 1, STEP_CLOEXEC, STEP_SETGROUPS, STEP_SETGID, STEP_SETUID, STEP_BOUNDING,
       STEP_AMBIENT, STEP_CAPSET, STEP_EXEC };

static long parse(const char *s) {
    long v = 0;
    if (!s || !*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000000L) return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

static int same(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

static void fail(long errfd, int step, long err) {
    int msg[2] = {step, (int)(err < 0 ? -err : err)};
    if (errfd >= 0) sys6(SYS_write, errfd, (long)msg, sizeof msg, 0, 0, 0);
    for (;;) sys6(SYS_exit_group, 127, 0, 0, 0, 0, 0);
}

static const char *path_of(char **envp) {
    for (; *envp; envp++) {
        const char *e = *envp;
        if (e[0] == 'P' && e[1] == 'A' && e[2] == 'T' && e[3] == 'H' && e[4] == '=') return e + 5;
    }
    return "/bin:/usr/bin";  /* CPython's os.defpath */
}

static int has_slash(const char *s) {
    for (; *s; s++)
        if (*s == '/') return 1;
    return 0;
}

/* execve `cmd` as CPython's child does: a name with a '/' once, else each PATH folder in turn;
 * returns the first error that is not "no such file" (else the last one) */
static long exec_command(char **cmd, char **envp) {
    static char buf[8192];
    const char *name = cmd[0], *dirs;
    long first = 0, last = ENOENT, r, n, i, len;
    if (has_slash(name)) return -sys6(SYS_execve, (long)name, (long)cmd, (long)envp, 0, 0, 0);
    for (len = 0; name[len]; len++) {}
    dirs = path_of(envp);
    for (;;) {
        for (n = 0; dirs[n] && dirs[n] != ':'; n++) {}
        if (n + 1 + len + 1 > (long)sizeof buf) {
            r = -ENAMETOOLONG;
        } else {
            for (i = 0; i < n; i++) buf[i] = dirs[i];
            if (n) buf[n++] = '/';  /* an empty folder is the current one: the bare name */
            for (i = 0; i <= len; i++) buf[n + i] = name[i];
            r = sys6(SYS_execve, (long)buf, (long)cmd, (long)envp, 0, 0, 0);
        }
        last = -r;
        if (last != ENOENT && last != ENOTDIR && first == 0) first = last;
        for (; *dirs && *dirs != ':'; dirs++) {}
        if (!*dirs) break;
        dirs++;
    }
    return first ? first : last;
}

__attribute__((used)) void trampoline_main(long *sp) {
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    long uid, gid, errfd, r, i;
    if (argc < 6) fail(-1, STEP_ARGS, EINVAL);
    uid = parse(argv[1]), gid = parse(argv[2]), errfd = parse(argv[3]);
    if (uid <= 0 || gid <= 0 || errfd < 0 || !same(argv[4], "--")) fail(errfd, STEP_ARGS, EINVAL);

    if ((r = sys6(SYS_fcntl, errfd, F_SETFD, FD_CLOEXEC, 0, 0, 0)) < 0) fail(errfd, STEP_CLOEXEC, r);
    if ((r = sys6(SYS_setgroups, 0, 0, 0, 0, 0, 0)) < 0) fail(errfd, STEP_SETGROUPS, r);
    if ((r = sys6(SYS_setresgid, gid, gid, gid, 0, 0, 0)) < 0) fail(errfd, STEP_SETGID, r);
    for (i = 0; i < 64; i++) {  /* EINVAL past the kernel's last capability */
        r = sys6(SYS_prctl, PR_CAPBSET_DROP, i, 0, 0, 0, 0);
        if (r < 0 && r != -EINVAL) fail(errfd, STEP_BOUNDING, r);
    }
    if ((r = sys6(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)) < 0)
        fail(errfd, STEP_AMBIENT, r);
    if ((r = sys6(SYS_setresuid, -1, uid, -1, 0, 0, 0)) < 0) fail(errfd, STEP_SETUID, r);
    {
        unsigned int header[2] = {0x20080522u, 0};  /* _LINUX_CAPABILITY_VERSION_3, this thread */
        unsigned int data[6] = {0, 0, 0, 0, 0, 0};   /* effective, permitted, inheritable x 2 */
        if ((r = sys6(SYS_capset, (long)header, (long)data, 0, 0, 0, 0)) < 0)
            fail(errfd, STEP_CAPSET, r);
    }
    if ((r = sys6(SYS_setresuid, uid, uid, uid, 0, 0, 0)) < 0) fail(errfd, STEP_SETUID, r);

    fail(errfd, STEP_EXEC, exec_command(argv + 5, envp));
}
