/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * session.h - what every command that runs BPF (record, top) does the same
 * way: the checks before anything is loaded (privileges, BTF, PIDs,
 * tracefs), libbpf's log, the uprobe_multi feature probe, loading with one
 * message, the targets map and tracepoints (finding and attaching the GPU
 * libraries: discover.h). Each returns -1 after a one-line error that
 * names the cause and the fix.
 */
#ifndef GB_SESSION_H
#define GB_SESSION_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_object_skeleton;
struct bpf_program;
struct bpf_link;

/* root or CAP_BPF+CAP_PERFMON, BTF, every PID alive, tracefs mounted (or mounted now) */
int session_preflight(const pid_t *pids, unsigned npids);
int session_check_privileges(void);
int session_check_btf(void);
int session_check_pids(const pid_t *pids, unsigned n);
int session_ensure_tracefs(void);

/*
 * Least privilege (host/privs.h): once the programs are loaded and the
 * first libraries attached, keep only what discovery and attaching still
 * need (privs_recording_set()) plus extra; said on stderr if it fails.
 * Call while single-threaded (capabilities are per thread). when: for -v.
 */
int session_limit_privileges(uint64_t extra, const char *when);
/* what attaching later needs beyond that: cap_sys_admin for perf-event uprobes
 * (no uprobe_multi links, or no process events: the loader hook) */
uint64_t session_attach_caps(bool multi, bool stream);
/* keep only keep (the recording is over: the parsers and writers that remain) */
int session_drop_privileges(uint64_t keep, const char *when);

/* libbpf's messages: warnings with -v, debug with -vv */
void session_log_init(void);

/* uprobe_multi links when the kernel has them: true when prepared */
bool session_prepare_multi(struct bpf_program *entry, struct bpf_program *ret);
/*
 * The BPF objects' runctx_loads (bpf/common.bpf.h, gb_runctx): read the
 * attach cookie and a session's side from the kernel's uprobe_multi run
 * context. multi: the probes are attached with uprobe_multi links (only
 * those have that context); and the kernel's BTF has every field it reads;
 * GPUBPF_TEST_NO_RUNCTX=1 (tests) keeps the helpers. *test_skew: the
 * programs' runctx_test_skew (GPUBPF_TEST_RUNCTX_SKEW, tests: a context that
 * disagrees with the registers; 0 otherwise).
 */
bool session_runctx(bool multi, uint64_t *test_skew);
/* one line for -v: which way the programs took (their runctx_ok, runctx_bad) */
const char *session_runctx_said(bool loads, bool ok, bool bad);
/* load a skeleton's object (rodata and map sizes set before) */
int session_load(struct bpf_object_skeleton *s);
/* trace these processes (the programs' filter_pids on) */
int session_add_target(int targets_fd, pid_t pid);
/* attach a tracepoint program; what names it in the error */
struct bpf_link *session_attach_tp(struct bpf_program *p, const char *what);

/* ring size rounded up to a power of two of at least a page */
uint64_t session_ring_bytes(uint64_t v);
#endif
