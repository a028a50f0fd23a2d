// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record.c - gpubpf record: load the BPF programs, find and attach the GPU
 * libraries, drain the ring buffer into the collector and the .sbt writer
 * until Ctrl-C, -d or the traced command ends.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cuda.skel.h"
#include "cmds.h"
#include "collect/collector.h"
#include "cupti/cupti_attach.h"
#include "cupti/cupti_join.h"
#include "ioctl/ioctl.h"
#include "xray_import/xray.h"
#include "collect/libs.h"
#include "collect/umulti.h"
#include "core/hmap.h"
#include "record.h"
#include "sbt/sbt.h"
#include "collect/stack_record.h"
#include "core/util.h"

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = sig;
}

static const char usage_text[] =
"Usage: gpubpf record [OPTIONS] (-a | -p PID... | -- COMMAND [ARGS...])\n"
"\n"
"Trace GPU API calls (CUDA driver and runtime, HIP) with uprobes into a .sbt file.\n"
"\n"
"Targets:\n"
"  -a, --all              every process on the system, also those started later\n"
"  -p, --pid PID          a running process and its threads (repeatable)\n"
"  -- COMMAND ARGS        start COMMAND, trace it and its descendants, stop when it exits\n"
"\n"
"Options:\n"
"  -o, --output FILE      trace file to write (default gpubpf.sbt); created 0600,\n"
"                         never through a symlink, owned by the sudo caller\n"
"  -d, --duration SECS    stop after SECS seconds\n"
"      --ring-size SIZE   BPF ring buffer size (default 8M; rounded up to a power of 2)\n"
"      --lib PATH         also trace this library file (repeatable); its kind comes\n"
"                         from its name, unknown names are treated as libcuda\n"
"      --lean             no return probes on launches: lowest overhead, launches\n"
"                         lose their duration and return code\n"
"      --perfetto FILE    also export a Perfetto trace to FILE at the end\n"
"      --stack MODE       call stack of each GPU call: fp (frame pointers, default),\n"
"                         dwarf[=BYTES] (copy BYTES of stack, default 8K, max 64K, and\n"
"                         unwind with .eh_frame: works without frame pointers), none\n"
"      --python           add CPython frames (function, file, line) to the stacks\n"
"      --ioctl            also trace GPU driver ioctls (NVIDIA nvidiactl/nvidia*/nvidia-uvm,\n"
"                         AMD kfd, DRM render nodes): name, decoded arguments, duration;\n"
"                         the source (kprobe, fentry or syscall tracepoints) is probed\n"
"      --ioctl-dev SPEC   also watch this device (repeatable; implies --ioctl and the\n"
"                         tracepoint source): PATH or MAJOR:MINOR, then =nvidia, =uvm,\n"
"                         =kfd or =drm to decode it as that driver (needed unless the\n"
"                         major is a GPU driver's), then @VERSION for the NVIDIA driver\n"
"                         version whose layouts apply, e.g. /dev/null=nvidia@550.54\n"
"      --xray-dir DIR     at the end, import the LLVM XRay logs (xray-log.*) written\n"
"                         to DIR during the recording onto the same timeline\n"
"      --cupti-lib PATH   attach to the USDT probes of the CUPTI injection library\n"
"                         (build/cupti/libgpubpf_cupti.so) for device timing\n"
"      --cupti            with -- COMMAND: also load that library into the command\n"
"                         (sets CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH)\n"
"      --ready-file FILE  create FILE once every probe is attached (for scripts)\n"
"  -v, --verbose          say which libraries and probes were attached\n"
"  -h, --help             this text\n"
"\n"
"Libraries are found in the loader cache, standard directories, /usr/local/cuda*,\n"
"$CUDA_HOME, /opt/rocm*, and in the mappings of every running process (also inside\n"
"containers); a library loaded later (dlopen, a new process) is attached when the\n"
"dynamic loader reports it.\n"
"\n"
"EXAMPLES:\n"
"  sudo gpubpf record -a -o trace.sbt                   # every process, until Ctrl-C\n"
"  sudo gpubpf record -p 4242 -p 4250 -d 30 -o job.sbt  # running processes, 30 s\n"
"  sudo gpubpf record -o run.sbt -- ./train --epochs 1  # a command and its children\n";

enum { OPT_RING = 256, OPT_LIB, OPT_LEAN, OPT_READY, OPT_PERFETTO, OPT_CUPTI_LIB, OPT_CUPTI, OPT_XRAY_DIR,
       OPT_STACK, OPT_PYTHON, OPT_IOCTL, OPT_IOCTL_DEV };

static const struct option long_opts[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "ring-size", required_argument, NULL, OPT_RING },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "lean", no_argument, NULL, OPT_LEAN },
	{ "ready-file", required_argument, NULL, OPT_READY },
	{ "perfetto", required_argument, NULL, OPT_PERFETTO },
	{ "cupti-lib", required_argument, NULL, OPT_CUPTI_LIB },
	{ "cupti", no_argument, NULL, OPT_CUPTI },
	{ "xray-dir", required_argument, NULL, OPT_XRAY_DIR },
	{ "stack", required_argument, NULL, OPT_STACK },
	{ "python", no_argument, NULL, OPT_PYTHON },
	{ "ioctl", no_argument, NULL, OPT_IOCTL },
	{ "ioctl-dev", required_argument, NULL, OPT_IOCTL_DEV },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_args(struct record_opts *o, int argc, char **argv)
{
	int c;

	o->output = "gpubpf.sbt";
	o->ring_size = 8 << 20;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+ap:o:d:vh", long_opts, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'a':
			o->all = true;
			break;
		case 'p':
			if (gb_parse_u64(optarg, &v) || !v || v > 0x7fffffff || o->npids >= RECORD_MAX_PIDS) {
				gb_err("bad PID '%s': give a process id (repeat -p for several, at most %d)",
				       optarg, RECORD_MAX_PIDS);
				return -1;
			}
			o->pids[o->npids++] = (pid_t)v;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'd': {
			char *end;
			double d = strtod(optarg, &end);

			if (*end || d <= 0) {
				gb_err("bad duration '%s': give seconds, e.g. -d 30", optarg);
				return -1;
			}
			o->duration_ns = (uint64_t)(d * 1e9);
			break;
		}
		case OPT_RING:
			if (gb_parse_size(optarg, &v) || v < 4096 || v > (1ull << 30)) {
				gb_err("bad --ring-size '%s': give a size from 4K to 1G, e.g. 16M", optarg);
				return -1;
			}
			o->ring_size = v;
			break;
		case OPT_LIB:
			if (o->nlibs >= RECORD_MAX_LIBS) {
				gb_err("too many --lib (at most %d)", RECORD_MAX_LIBS);
				return -1;
			}
			o->libs[o->nlibs++] = optarg;
			break;
		case OPT_LEAN:
			o->lean = true;
			break;
		case OPT_READY:
			o->ready_file = optarg;
			break;
		case OPT_PERFETTO:
			o->perfetto = optarg;
			break;
		case OPT_CUPTI_LIB:
			o->cupti_lib = optarg;
			break;
		case OPT_CUPTI:
			o->cupti_inject = true;
			break;
		case OPT_XRAY_DIR:
			o->xray_dir = optarg;
			break;
		case OPT_STACK:
			if (stack_parse_opt(&o->stack, optarg))
				return -1;
			break;
		case OPT_PYTHON:
			o->stack.python = true;
			break;
		case OPT_IOCTL:
			o->ioctl = true;
			break;
		case OPT_IOCTL_DEV:
			if (o->nioctl_devs >= 16) {
				gb_err("too many --ioctl-dev (at most 16)");
				return -1;
			}
			o->ioctl_devs[o->nioctl_devs++] = optarg;
			o->ioctl = true;
			break;
		case 'v':
			gb_verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			fprintf(stderr, "Run 'gpubpf record --help' for usage.\n");
			return -1;
		}
	}
	if (optind < argc) {
		o->cmd = argv + optind;
	}
	if (o->cupti_inject && !o->cupti_lib)
		o->cupti_lib = cupti_default_lib();
	if (o->cupti_inject && !o->cmd) {
		gb_err("--cupti loads the library into a command: use it with -- COMMAND (for running processes set CUDA_INJECTION64_PATH yourself and give --cupti-lib)");
		return -1;
	}
	if (!o->all + !o->npids + !o->cmd != 2) {
		gb_err("choose one target: -a (every process), -p PID, or -- COMMAND");
		return -1;
	}
	return 0;
}

/* Root, or CAP_BPF with CAP_PERFMON (and CAP_SYS_ADMIN to mount tracefs) */
int record_check_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	uint64_t eff;

	if (syscall(SYS_capget, &h, d))
		return 0;	/* cannot tell: let the load say */
	eff = d[0].effective | ((uint64_t)d[1].effective << 32);
#define HAS(cap) (eff & (1ull << (cap)))
	if (HAS(CAP_SYS_ADMIN) || (HAS(CAP_BPF) && HAS(CAP_PERFMON)))
		return 0;
#undef HAS
	gb_err("tracing needs root or CAP_BPF+CAP_PERFMON (with CAP_DAC_READ_SEARCH for tracefs and CAP_SYS_PTRACE for other users' processes): run it with sudo");
	return -1;
}

int record_check_btf(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		return 0;
	gb_err("this kernel exposes no BTF (/sys/kernel/btf/vmlinux): use a kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels since 2021)");
	return -1;
}

/*
 * Tracepoints need tracefs; mount it where it belongs when nobody did.
 * Checked with the effective ids and capabilities: access() uses the real
 * uid and drops capabilities, and /sys/kernel/tracing is mode 0700, so a
 * non-root user with CAP_DAC_READ_SEARCH was told tracefs was missing.
 */
int record_ensure_tracefs(void)
{
	if (faccessat(AT_FDCWD, "/sys/kernel/tracing/events", F_OK, AT_EACCESS) == 0 ||
	    faccessat(AT_FDCWD, "/sys/kernel/debug/tracing/events", F_OK, AT_EACCESS) == 0)
		return 0;
	if (errno == EACCES) {
		gb_err("cannot read /sys/kernel/tracing (mode 0700): run as root or add CAP_DAC_READ_SEARCH to CAP_BPF and CAP_PERFMON");
		return -1;
	}
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		gb_dbg("mounted tracefs at /sys/kernel/tracing");
		return 0;
	}
	gb_err("tracefs is not mounted and mounting it failed (%s): run 'mount -t tracefs nodev /sys/kernel/tracing'",
	       strerror(errno));
	return -1;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && gb_verbose < 2)
		return 0;
	if (level == LIBBPF_INFO && gb_verbose < 1)
		return 0;
	if (level == LIBBPF_WARN && gb_verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t round_pow2(uint64_t v)
{
	uint64_t p = 4096;

	while (p < v)
		p <<= 1;
	return p;
}

struct rec_ctx {
	struct record_opts *o;
	struct cuda_bpf *skel;
	struct gb_libs *libs;
	struct collector *col;
	struct sbt_writer *w;
	struct ring_buffer *rb;
	bool multi;		/* uprobe_multi links */
	struct cupti_join *join;
	struct cupti_attach *cupti;
	struct ioctl_attach *ioctl;
	int write_err;
	uint64_t drops_reported;
	long budget;		/* records left in this consume pass */
	uint64_t written;	/* events written, of every kind */
	struct hmap pids;	/* processes they came from */
	uint64_t by_cat[GB_CAT__COUNT];	/* device work counted once (outermost calls) */
	pid_t child;
	int go_fd;		/* write end: releases the child */
};

static int write_event(struct rec_ctx *r, const struct gb_event *ev)
{
	int err;

	if (r->write_err)
		return -1;
	err = sbt_writer_add(r->w, ev);
	if (!err) {
		r->written++;
		if (!hmap_get(&r->pids, ev->pid))
			hmap_put(&r->pids, ev->pid, (void *)1);
		if (gb_event_outermost(ev))
			r->by_cat[gb_event_cat(ev)]++;
	}
	if (err) {
		r->write_err = err;
		return -1;
	}
	return 0;
}

static void join_out(void *ctx, const struct gb_event *ev)
{
	write_event(ctx, ev);
}

/* every host event passes the join: it may hold a launch for its device time */
static int sink_event(void *ctx, const struct gb_event *ev)
{
	struct rec_ctx *r = ctx;

	if (r->join && cupti_join_host(r->join, ev))
		return r->write_err ? -1 : 0;
	return write_event(r, ev);
}

static int sink_raw(void *ctx, const void *data, size_t size)
{
	struct rec_ctx *r = ctx;
	const struct gb_rec *rec = data;

	if (r->join && rec->kind >= GB_REC_CUPTI_LAUNCH && rec->kind <= GB_REC_CUPTI_LOST)
		cupti_join_rec(r->join, data, size);
	if (r->ioctl && rec->kind == GB_REC_IOCTL) {
		struct gb_event ev;

		if (!ioctl_decoder_event(ioctl_attach_decoder(r->ioctl), data, size,
					 collector_strings(r->col), &ev))
			return sink_event(r, &ev);
	}
	return 0;
}

static void sink_rescan(void *ctx, pid_t pid)
{
	struct rec_ctx *r = ctx;

	if (libs_scan_pid(r->libs, pid) > 0)
		gb_dbg("pid %d mapped a new GPU library", (int)pid);
}

/* one counter of the per-CPU drops map (GB_DROP_*), per CPU and summed */
static uint64_t read_drop_kind(struct rec_ctx *r, uint32_t kind, uint64_t *per_cpu, unsigned ncpu)
{
	uint64_t total = 0;
	unsigned i;

	memset(per_cpu, 0, ncpu * sizeof(*per_cpu));
	if (bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.drops), &kind, per_cpu))
		return 0;
	for (i = 0; i < ncpu; i++)
		total += per_cpu[i];
	return total;
}

/* lost call records: what `info` and the drop events report */
static uint64_t read_drops(struct rec_ctx *r, uint64_t *per_cpu, unsigned ncpu)
{
	return read_drop_kind(r, GB_DROP_CALL, per_cpu, ncpu);
}

/* children the targets map had no room for, loader/exit notices lost: said, never silent */
static void report_ctl_drops(struct rec_ctx *r)
{
	unsigned ncpu = libbpf_num_possible_cpus();
	uint64_t per_cpu[ncpu], n;
	char v[32];

	if ((n = read_drop_kind(r, GB_DROP_TARGET, per_cpu, ncpu))) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)n);
		sbt_writer_note(r->w, "drops.targets", v);
		gb_warn("%llu child processes of the command were not traced: more than %u were alive at once",
			(unsigned long long)n, GB_MAX_TARGETS);
	}
	if ((n = read_drop_kind(r, GB_DROP_CTL, per_cpu, ncpu))) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)n);
		sbt_writer_note(r->w, "drops.notices", v);
		gb_warn("%llu loader/exit notices were lost (ring buffer full): use a larger --ring-size",
			(unsigned long long)n);
	}
}

/* Drops become events too, so a timeline shows where data is missing */
static void note_drops(struct rec_ctx *r)
{
	unsigned ncpu = libbpf_num_possible_cpus();
	uint64_t per_cpu[ncpu], total = read_drops(r, per_cpu, ncpu);
	struct gb_event ev = { 0 };

	if (total <= r->drops_reported)
		return;
	ev.ts_ns = gb_now_mono_ns();
	ev.type = GB_T_drops;
	ev.api = GB_API_GPUBPF;
	ev.bytes = total - r->drops_reported;
	ev.flags = GB_EF_BYTES | GB_EF_INSTANT;
	ev.pid = getpid();
	ev.tid = ev.pid;
	ev.comm = "gpubpf";
	r->drops_reported = total;
	sink_event(r, &ev);
}

static int add_target(struct rec_ctx *r, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;

	return bpf_map_update_elem(bpf_map__fd(r->skel->maps.targets), &key, &one, BPF_ANY);
}

/* Fork the command stopped on a pipe: it runs once probes are attached */
static int spawn_child(struct rec_ctx *r)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o->cmd[0], r->o->cmd);
		fprintf(stderr, "gpubpf: error: cannot run '%s': %s\n", r->o->cmd[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	r->child = pid;
	r->go_fd = fds[1];
	return 0;
}

/* after the main skeleton is loaded: the ioctl programs share its maps */
static int attach_ioctl(struct rec_ctx *r)
{
	struct ioctl_opts io = {
		.ndevs = r->o->nioctl_devs, .filter = !r->o->all,
		.ringbuf_fd = bpf_map__fd(r->skel->maps.rb),
		.targets_fd = bpf_map__fd(r->skel->maps.targets),
		.drops_fd = bpf_map__fd(r->skel->maps.drops),
	};
	const char *src;
	char msg[512];

	memcpy(io.devs, r->o->ioctl_devs, sizeof(io.devs));
	if (ioctl_attach(&io, &r->ioctl, msg, sizeof(msg))) {
		gb_err("%s", msg);
		return -1;
	}
	src = ioctl_source_name(ioctl_attach_source(r->ioctl));
	if (gb_verbose)
		fprintf(stderr, "gpubpf: ioctl source: %s (%s)\n", src, ioctl_attach_reason(r->ioctl));
	sbt_writer_note(r->w, "ioctl.source", src);
	sbt_writer_note(r->w, "ioctl.reason", ioctl_attach_reason(r->ioctl));
	sbt_writer_note(r->w, "ioctl.layouts", ioctl_decoder_layout_note(ioctl_attach_decoder(r->ioctl)));
	return 0;
}

static int open_bpf(struct rec_ctx *r)
{
	struct record_opts *o = r->o;
	unsigned i;
	int err;

	r->skel = cuda_bpf__open();
	if (!r->skel) {
		gb_err("cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	r->skel->rodata->filter_pids = !o->all;
	r->skel->rodata->follow_children = o->cmd != NULL;
	/* fault injection for the tests: every Nth thread-state lookup fails */
	if (getenv("GPUBPF_TEST_FAIL_STORAGE"))
		r->skel->rodata->fail_storage_every = (uint32_t)strtoul(getenv("GPUBPF_TEST_FAIL_STORAGE"), NULL, 10);
	if (stack_setup_bpf(&o->stack, r->skel))
		return -1;
	bpf_map__set_max_entries(r->skel->maps.rb, (uint32_t)round_pow2(o->ring_size));
	if (umulti_supported()) {
		umulti_prepare(r->skel->progs.gb_entry);
		umulti_prepare(r->skel->progs.gb_return);
		r->multi = true;
	}
	err = cuda_bpf__load(r->skel);
	if (err) {
		gb_err("the kernel refused the BPF programs (%s): run as root on a kernel with BPF and BTF; -v shows the verifier log",
		       strerror(-err));
		return -1;
	}
	for (i = 0; i < o->npids; i++)
		add_target(r, o->pids[i]);
	if (o->cupti_lib) {
		char msg[512];

		if (cupti_attach_drops_fd(o->cupti_lib, bpf_map__fd(r->skel->maps.rb),
					  bpf_map__fd(r->skel->maps.targets), bpf_map__fd(r->skel->maps.drops),
					  !o->all, &r->cupti, msg, sizeof(msg))) {
			gb_err("%s", msg);
			return -1;
		}
		if (o->cupti_inject) {
			setenv("CUDA_INJECTION64_PATH", o->cupti_lib, 1);
			setenv("NVTX_INJECTION64_PATH", o->cupti_lib, 1);
		}
	}
	if (o->ioctl && attach_ioctl(r))
		return -1;
	if (o->cmd) {
		if ((err = spawn_child(r))) {
			gb_err("cannot start '%s': %s", o->cmd[0], strerror(-err));
			return -1;
		}
		add_target(r, r->child);
	}
	r->skel->links.gb_newtask = bpf_program__attach(r->skel->progs.gb_newtask);
	r->skel->links.gb_exit = bpf_program__attach(r->skel->progs.gb_exit);
	if (!r->skel->links.gb_newtask || !r->skel->links.gb_exit) {
		gb_err("cannot attach the sched tracepoints (%s): is tracefs mounted at /sys/kernel/tracing?",
		       strerror(errno));
		return -1;
	}
	return 0;
}

static int attach_libs(struct rec_ctx *r)
{
	struct record_opts *o = r->o;
	struct libs_opts lo = {
		.entry = r->skel->progs.gb_entry,
		.ret = r->skel->progs.gb_return,
		.dl_state = r->skel->progs.gb_dl_state,
		.lean = o->lean,
		.multi = r->multi,
		.kinds = ~0u,
	};
	unsigned i;
	int err;

	r->libs = libs_new(&lo);
	if (!r->libs)
		return -1;
	for (i = 0; i < o->nlibs; i++) {
		err = libs_add_path(r->libs, o->libs[i], true);
		if (err < 0) {
			gb_err("cannot trace --lib %s: %s; give the path of a libcuda/libcudart/libamdhip64 file",
			       o->libs[i], strerror(-err));
			return -1;
		}
	}
	libs_scan_standard(r->libs);
	libs_scan_all_pids(r->libs);
	if (!libs_count(r->libs) && o->ioctl) {
		gb_dbg("no GPU library found: tracing driver ioctls only");
	} else if (!libs_count(r->libs)) {
		gb_err("no libcuda, libcudart or libamdhip64 found (looked in %s): install the GPU driver/runtime or name the library with --lib PATH",
		       libs_searched(r->libs));
		return -1;
	}
	if (gb_verbose)
		libs_print(r->libs, stderr);
	return 0;
}

int record_check_pids(const pid_t *pids, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (kill(pids[i], 0) && errno == ESRCH) {
			gb_err("PID %d not found: check that the process is running (ps -p %d)",
			       (int)pids[i], (int)pids[i]);
			return -1;
		}
	}
	return 0;
}

/* the library built beside this binary, else the installed one */
const char *cupti_default_lib(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	char *slash;

	if (n > 0) {
		path[n] = 0;
		slash = strrchr(path, '/');
		if (slash) {
			strcpy(slash, "/cupti/libgpubpf_cupti.so");
			if (access(path, R_OK) == 0)
				return path;
		}
	}
	return "/usr/local/lib/gpubpf/libgpubpf_cupti.so";
}

/* XRay logs written during the recording join the trace; a bad log is reported, not fatal */
static void import_xray(struct rec_ctx *r, const struct sbt_meta *m)
{
	char msg[512] = "";
	int n = xray_import_dir(r->o->xray_dir, r->o->cmd ? r->o->cmd[0] : NULL, r->w,
				m->real_start_ns, m->mono_start_ns, msg, sizeof(msg));

	if (n < 0)
		gb_warn("--xray-dir %s: %s", r->o->xray_dir, msg);
	else
		gb_dbg("imported %d XRay logs from %s", n, r->o->xray_dir);
}

/*
 * Every kind of event written, device work counted once (a runtime launch
 * and the driver launch it makes are one launch); kinds beyond the first
 * four only when present.
 */
static void summary(struct rec_ctx *r, uint64_t drops, double secs)
{
	static const char *const more[GB_CAT__COUNT] = {
		[GB_CAT_MEMSET] = "memsets", [GB_CAT_FREE] = "frees", [GB_CAT_NAME] = "name lookups",
		[GB_CAT_IOCTL] = "ioctls", [GB_CAT_FUNC] = "functions", [GB_CAT_MARK] = "marks",
		[GB_CAT_DEVICE] = "device activities",
	};
	char extra[512] = "";
	size_t len = 0;
	unsigned c;

	for (c = 0; c < GB_CAT__COUNT; c++)
		if (more[c] && r->by_cat[c] && len < sizeof(extra))
			len += snprintf(extra + len, sizeof(extra) - len, ", %llu %s",
					(unsigned long long)r->by_cat[c], more[c]);
	fprintf(stderr,
		"gpubpf: %llu events in %.1f s from %llu processes (%llu launches, %llu copies, %llu allocs, %llu syncs%s) -> %s\n",
		(unsigned long long)r->written, secs, (unsigned long long)r->pids.n,
		(unsigned long long)r->by_cat[GB_CAT_LAUNCH], (unsigned long long)r->by_cat[GB_CAT_COPY],
		(unsigned long long)r->by_cat[GB_CAT_ALLOC], (unsigned long long)r->by_cat[GB_CAT_SYNC],
		extra, r->o->output);
	if (drops)
		fprintf(stderr, "gpubpf: %llu events dropped (ring buffer full): use a larger --ring-size\n",
			(unsigned long long)drops);
}

/*
 * The ring-buffer callback: every record goes to the collector, and after
 * RB_BUDGET records the pass stops (libbpf 1.1 has no consume_n), so the
 * loop gets back to signals, flushes and reaping however fast producers are.
 */
#define RB_BUDGET	16384
#define RB_PAUSE	(-ECANCELED)

static int rb_sample(void *ctx, void *data, size_t size)
{
	struct rec_ctx *r = ctx;
	int err = collector_handle(r->col, data, size);

	if (err < 0)
		return err;
	return --r->budget > 0 ? 0 : RB_PAUSE;
}

/* one bounded pass; true when records were left in the ring */
static bool drain_pass(struct rec_ctx *r, int timeout_ms)
{
	int status;

	r->budget = RB_BUDGET;
	status = timeout_ms ? ring_buffer__poll(r->rb, timeout_ms) : ring_buffer__consume(r->rb);
	if (status == RB_PAUSE)
		return true;
	if (status < 0 && !r->write_err)
		gb_dbg("ring buffer: %s", strerror(-status));
	return false;
}

/* at the end: stop new calls in BPF, then take what is left (bounded) */
static void final_drain(struct rec_ctx *r)
{
	uint64_t until = gb_now_mono_ns() + 2000000000ull;

	r->skel->bss->stopping = 1;
	while (!r->write_err && drain_pass(r, 0) && gb_now_mono_ns() < until)
		;
}

static int run_loop(struct rec_ctx *r, uint64_t start_ns)
{
	uint64_t last_flush = start_ns, now;
	bool backlog = false;
	int status;

	while (!exiting) {
		/* records sent without wakeup are taken by the consume after the wait */
		if (!backlog)
			drain_pass(r, 1);
		backlog = drain_pass(r, 0);
		if (r->write_err)
			break;
		now = gb_now_mono_ns();
		cupti_join_drain(r->join, now, join_out, r);
		if (now - last_flush >= 1000000000ull) {
			note_drops(r);
			if ((r->write_err = sbt_writer_flush(r->w)))
				break;
			collector_reap(r->col, now, 2000000000ull);
			last_flush = now;
		}
		if (r->o->duration_ns && now - start_ns >= r->o->duration_ns)
			break;
		if (r->child && waitpid(r->child, &status, WNOHANG) == r->child) {
			r->child = 0;
			r->o->child_status = status;
			break;
		}
	}
	/* what the BPF side produced before we stopped is still ours */
	final_drain(r);
	cupti_join_flush(r->join, join_out, r);
	return r->write_err;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct rec_ctx r = { .o = &o, .go_fd = -1 };
	struct collector_ops ops = { .event = sink_event, .rescan = sink_rescan, .raw = sink_raw, .ctx = &r };
	struct sbt_meta meta;
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned ncpu = libbpf_num_possible_cpus();
	uint64_t start, *per_cpu = NULL, drops = 0;
	int ret = 1, err;

	if (parse_args(&o, argc, argv))
		return 2;
	if (record_check_privileges() || record_check_btf() || record_check_pids(o.pids, o.npids) || record_ensure_tracefs())
		return 1;
	libbpf_set_print(libbpf_log);
	sbt_meta_init(&meta, argc, argv);
	err = sbt_writer_open(&r.w, o.output, &meta);
	if (err) {
		gb_err("cannot write %s: %s; choose another -o path", o.output, strerror(-err));
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (open_bpf(&r) || attach_libs(&r))
		goto cleanup;
	r.col = collector_new(&ops);
	r.join = cupti_join_new(NULL);
	r.rb = ring_buffer__new(bpf_map__fd(r.skel->maps.rb), rb_sample, &r, NULL);
	if (!r.col || !r.rb || !r.join) {
		gb_err("cannot set up the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	if (stack_setup_collector(&o.stack, r.skel, r.col, r.w)) {
		gb_err("cannot set up call stacks: out of memory");
		goto cleanup;
	}
	if (o.ready_file)
		close(open(o.ready_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	gb_dbg("tracing: %u libraries, %u functions", libs_count(r.libs), libs_probe_count(r.libs));
	if (r.go_fd >= 0) {
		if (write(r.go_fd, "g", 1) != 1)
			gb_warn("could not start the command");
		close(r.go_fd);
		r.go_fd = -1;
	}
	start = gb_now_mono_ns();
	err = run_loop(&r, start);
	note_drops(&r);
	report_ctl_drops(&r);
	per_cpu = calloc(ncpu, sizeof(*per_cpu));
	if (per_cpu) {
		drops = read_drops(&r, per_cpu, ncpu);
		sbt_writer_set_drops(r.w, per_cpu, ncpu);
	}
	if (err) {
		gb_err("cannot write %s: %s; free space or choose another -o path (the blocks written so far are readable)",
		       o.output, strerror(-err));
		sbt_writer_abort(r.w);
		r.w = NULL;
		goto cleanup;
	}
	if (o.xray_dir)
		import_xray(&r, &meta);
	if (r.ioctl) {
		char dm[2048];

		ioctl_decoder_devmem(ioctl_attach_decoder(r.ioctl), dm, sizeof(dm));
		if (dm[0])
			sbt_writer_note(r.w, "ioctl.devmem", dm);
	}
	meta.real_end_ns = gb_now_real_ns();
	meta.mono_end_ns = gb_now_mono_ns();
	err = sbt_writer_close(r.w, &meta);
	r.w = NULL;
	if (err) {
		gb_err("cannot finish %s: %s", o.output, strerror(-err));
		goto cleanup;
	}
	summary(&r, drops, (gb_now_mono_ns() - start) / 1e9);
	stack_report(r.skel, r.col);
	ret = 0;
	if (o.perfetto) {
		char msg[512];

		if (!gb_export_file) {
			gb_err("--perfetto: this gpubpf was built without the exporters");
			ret = 1;
		} else if (gb_export_file(o.output, "perfetto", o.perfetto, msg, sizeof(msg))) {
			gb_err("%s", msg);
			ret = 1;
		}
	}
cleanup:
	if (r.w)
		sbt_writer_abort(r.w);
	if (r.go_fd >= 0)
		close(r.go_fd);	/* the child sees EOF and exits without running */
	if (r.child > 0)
		waitpid(r.child, NULL, 0);
	ring_buffer__free(r.rb);
	cupti_detach(r.cupti);
	ioctl_detach(r.ioctl);
	libs_free(r.libs);
	collector_free(r.col);
	cupti_join_free(r.join);
	cuda_bpf__destroy(r.skel);
	hmap_free(&r.pids);
	free(per_cpu);
	return ret;
}
