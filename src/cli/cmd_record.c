// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_record.c - gpubpf record: options and help; the recording itself is
 * src/collect/recorder.c. With --perfetto, the export when it is done.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmds.h"
#include "collect/libs.h"
#include "collect/recorder.h"
#include "cupti/cupti_attach.h"
#include "host/privs.h"
#include "exporters/export.h"
#include "exporters/ui_serve.h"
#include "core/util.h"

/* cmd names a program execvp would run: errno set when not */
static bool runnable(const char *cmd)
{
	const char *path = getenv("PATH"), *p, *e;
	char buf[4096];
	int err = ENOENT;

	errno = 0;
	if (!*cmd) {
		errno = ENOENT;
		return false;
	}
	if (strchr(cmd, '/'))
		return !faccessat(AT_FDCWD, cmd, X_OK, AT_EACCESS);
	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; ; p = e + 1) {
		e = strchrnul(p, ':');
		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(e - p), p, e > p ? "/" : "", cmd) <
		    (int)sizeof(buf)) {
			if (!faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS))
				return true;
			if (errno != ENOENT && errno != ENOTDIR)
				err = errno;
		}
		if (!*e)
			break;
	}
	errno = err;
	return false;
}

static const char usage_text[] =
"Usage: gpubpf record [OPTIONS] (-a | -p PID... | -- COMMAND [ARGS...])\n"
"\n"
"Trace GPU API calls (CUDA driver and runtime, HIP) with uprobes into a .sbt file.\n"
"Needs root or the capabilities 'gpubpf check' lists; after attaching it keeps only\n"
"cap_bpf, cap_perfmon, cap_dac_read_search and cap_sys_ptrace (README: Privileges).\n"
"\n"
"Targets:\n"
"  -a, --all              every process on the system, also those started later\n"
"                         (containers, wheels, static CUDA runtimes included)\n"
"  -p, --pid PID          a running process and its threads (repeatable); the\n"
"                         breakpoints go into these processes only\n"
"      --children         with -p: also the processes they start (now and later),\n"
"                         each with its own breakpoints; stops when all have exited\n"
"      --ack-dir DIR      with --children: create DIR/PID once a followed process\n"
"                         has its breakpoints (a launcher can hold a child until then:\n"
"                         its very first calls are then traced too)\n"
"  -- COMMAND ARGS        start COMMAND, trace it and its descendants, stop when it exits;\n"
"                         the trace written, exit with COMMAND's status (128 + signal)\n"
"\n"
"Options:\n"
"  -o, --output FILE      trace file to write (default gpubpf.sbt); created 0600,\n"
"                         never through a symlink, owned by the sudo caller;\n"
"                         /dev/fd/N: the regular file open on descriptor N, emptied\n"
"  -d, --duration SECS    stop after SECS seconds\n"
"      --ring-size SIZE   BPF ring buffer size (default 8M, 64M for DWARF stacks;\n"
"                         rounded up to a power of 2)\n"
"      --lib PATH         also trace this library file (repeatable); its kind comes\n"
"                         from its name, unknown names are treated as libcuda\n"
"      --libs LIST        library operations to trace, comma separated: cublas\n"
"                         (cuBLAS GEMMs and cuBLASLt matmuls), cudnn (convolutions,\n"
"                         graph execution), jit (NVRTC compilations, nvJitLink links);\n"
"                         default all: each op is a range its launches nest under\n"
"      --no-libs          none of them (CUDA, HIP, NCCL calls only)\n"
"      --launch-returns   a return probe on every launch too (a second trap each):\n"
"                         their duration and return code. By default launches are\n"
"                         recorded at entry and 1 in 64 at random gets its return\n"
"                         (where the kernel has session uprobes: see gpubpf check);\n"
"                         with device timing (--cupti or --cupti-lib) every launch\n"
"                         does. Other calls always do\n"
"      --lean             lowest overhead: launches recorded from registers alone in\n"
"                         64-byte records, without stacks (a stack mode given with\n"
"                         it keeps the full record) and without what a launch passes\n"
"                         on the stack (driver launches: block z, shared memory and\n"
"                         stream; runtime launches: shared memory and stream)\n"
"      --perfetto FILE    also export a Perfetto trace to FILE at the end\n"
"      --open             with --perfetto: then serve FILE once on 127.0.0.1:9001,\n"
"                         print the https://ui.perfetto.dev link that opens it and,\n"
"                         over ssh, the ssh -L line for your machine (sudo keeps\n"
"                         $SSH_CONNECTION with --preserve-env=SSH_CONNECTION);\n"
"                         exits once the UI fetched it whole, or on Ctrl-C\n"
"      --open-port N      serve on port N instead (implies --open); ui.perfetto.dev\n"
"                         fetches from 127.0.0.1:9001 only: forward 9001 to N\n"
"      --stack MODE       call stack of each GPU call: fp (frame pointers, default),\n"
"                         dwarf[=BYTES] (copy the live stack, BYTES at most, default\n"
"                         8K, max 64K, and unwind with .eh_frame: works without frame\n"
"                         pointers), none\n"
"      --python           add CPython frames (function, file, line) to the stacks\n"
"      --no-symbols       store no function names or source lines of the stacks' frames\n"
"                         (by default they are looked up when recording ends, from the\n"
"                         very files the processes mapped, and travel with the trace;\n"
"                         add them later with gpubpf symbolize)\n"
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
"                         PATH (libgpubpf_cupti.so) for device timing\n"
"      --cupti            also load that library into the targets: with -- COMMAND\n"
"                         through CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH;\n"
"                         with -p PID (or -a: every process with libcuda mapped)\n"
"                         into the running process with ptrace (x86-64): one thread\n"
"                         stopped at a syscall boundary, holding no lock, calls\n"
"                         dlopen and restores itself (registers, vector state, mask,\n"
"                         errno, its syscall) even if gpubpf is killed; no signal is\n"
"                         sent. At the end the library switches off at its next safe\n"
"                         point (flush, activity off, cuptiFinalize; it stays mapped,\n"
"                         inert), also by itself when gpubpf stops renewing its lease.\n"
"                         Refusals (ptrace_scope, no CUDA, static binary, another\n"
"                         CUPTI client, seccomp, a thread holding the loader's lock,\n"
"                         other arch) are one line and a note; the recording goes\n"
"                         on without device timing for that process. Default\n"
"                         library: build/cupti/ when gpubpf runs from its source\n"
"                         tree, else the installed PREFIX/lib/gpubpf/\n"
"      --ready-file FILE  create FILE once every probe is attached (for scripts)\n"
"\n"
"Flight recorder (incidents):\n"
"      --flight SECS      keep the last SECS seconds of events in memory instead of\n"
"                         writing them; write them as a normal trace when triggered:\n"
"                         SIGUSR1 to the recorder, `gpubpf dump`, a traced process\n"
"                         dying of a crash signal (SEGV, ABRT, BUS, ILL, FPE ...), or\n"
"                         the triggers below. Dumps go to -o's name numbered:\n"
"                         trace.sbt -> trace.1.sbt, trace.2.sbt ...; calls still\n"
"                         running are in each dump, in flight\n"
"      --flight-mem SIZE  memory bound of the window (default 64M): the oldest go first\n"
"      --trigger-on-error[=CODES]  dump when a traced call returns one of CODES\n"
"                         (numbers or names, comma separated; default: the errors\n"
"                         that leave a CUDA/HIP context unusable: 214 ECC, 700 illegal\n"
"                         address, 702 launch timeout, 710 assert, 714-719 hardware\n"
"                         stack, illegal instruction, misaligned/invalid address, PC,\n"
"                         launch failure)\n"
"      --trigger-stuck SECS  dump when a call has been running longer than SECS\n"
"                         Automatic triggers are rate limited: at most one dump a\n"
"                         second, the same error of the same process once a window.\n"
"  -v, --verbose          say which libraries and probes were attached\n"
"  -h, --help             this text\n"
"\n"
"GPU code is found in the loader cache, standard directories, /usr/local/cuda*,\n"
"$CUDA_HOME, /opt/rocm*, the mappings of every running process, and then in every\n"
"file mapping the kernel reports (perf side-band events): a library dlopen'd later,\n"
"a container's own copy, an executable or library with nvcc's static runtime\n"
"(device code and a symbol table) are attached when mapped. -v says which source.\n"
"\n"
"EXAMPLES:\n"
"  sudo gpubpf record -a -o trace.sbt                   # every process, until Ctrl-C\n"
"  sudo gpubpf record -p 4242 -p 4250 -d 30 -o job.sbt  # running processes, 30 s\n"
"  sudo gpubpf record -p 4242 --cupti -d 30 -o dev.sbt  # + device timing, attached live\n"
"  sudo gpubpf record -o run.sbt -- ./train --epochs 1  # a command and its children\n"
"  sudo gpubpf record --perfetto run.pftrace --open -- ./train  # then view it\n"
"  sudo gpubpf record -a --flight 30 --trigger-on-error -o incident.sbt  # always on\n"
"  sudo gpubpf record -p 4242 --libs cublas,jit -o ml.sbt  # GEMM shapes, JIT stalls\n";

enum { OPT_RING = 256, OPT_LIB, OPT_LEAN, OPT_LAUNCH_RETS, OPT_READY, OPT_PERFETTO, OPT_CUPTI_LIB, OPT_CUPTI, OPT_XRAY_DIR,
       OPT_STACK, OPT_PYTHON, OPT_NO_SYMBOLS, OPT_IOCTL, OPT_IOCTL_DEV, OPT_FLIGHT, OPT_FLIGHT_MEM, OPT_TRIG_ERR,
       OPT_TRIG_STUCK, OPT_OPEN, OPT_OPEN_PORT, OPT_LIBS, OPT_NO_LIBS, OPT_CHILDREN, OPT_ACK_DIR };

static const struct option long_opts[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "ring-size", required_argument, NULL, OPT_RING },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "lean", no_argument, NULL, OPT_LEAN },
	{ "launch-returns", no_argument, NULL, OPT_LAUNCH_RETS },
	{ "libs", required_argument, NULL, OPT_LIBS },
	{ "no-libs", no_argument, NULL, OPT_NO_LIBS },
	{ "ready-file", required_argument, NULL, OPT_READY },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "ack-dir", required_argument, NULL, OPT_ACK_DIR },
	{ "perfetto", required_argument, NULL, OPT_PERFETTO },
	{ "open", no_argument, NULL, OPT_OPEN },
	{ "open-port", required_argument, NULL, OPT_OPEN_PORT },
	{ "cupti-lib", required_argument, NULL, OPT_CUPTI_LIB },
	{ "cupti", no_argument, NULL, OPT_CUPTI },
	{ "xray-dir", required_argument, NULL, OPT_XRAY_DIR },
	{ "stack", required_argument, NULL, OPT_STACK },
	{ "python", no_argument, NULL, OPT_PYTHON },
	{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
	{ "ioctl", no_argument, NULL, OPT_IOCTL },
	{ "ioctl-dev", required_argument, NULL, OPT_IOCTL_DEV },
	{ "flight", required_argument, NULL, OPT_FLIGHT },
	{ "flight-mem", required_argument, NULL, OPT_FLIGHT_MEM },
	{ "trigger-on-error", optional_argument, NULL, OPT_TRIG_ERR },
	{ "trigger-stuck", required_argument, NULL, OPT_TRIG_STUCK },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_secs(const char *arg, uint64_t *ns, const char *opt, const char *example)
{
	double d;

	if (gb_parse_num(arg, &d) || !(d > 0) || d > 86400 * 365) {
		gb_err("bad %s '%s': give seconds, e.g. %s", opt, arg, example);
		return -1;
	}
	*ns = (uint64_t)(d * 1e9);
	return 0;
}

/* --trigger-on-error=700,CUDA_ERROR_LAUNCH_FAILED,... */
static int parse_codes(struct record_opts *o, const char *arg)
{
	char buf[512], *save = NULL, *t;
	int code;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		code = gb_error_code_parse(t);
		if (code < 0 || o->nerror_codes >= 32) {
			gb_err("bad --trigger-on-error code '%s': give return codes as numbers or names, at most 32, e.g. --trigger-on-error=700,719 or =CUDA_ERROR_ILLEGAL_ADDRESS",
			       t);
			return -1;
		}
		o->error_codes[o->nerror_codes++] = code;
	}
	if (!o->nerror_codes) {
		gb_err("empty --trigger-on-error=: give codes, or no '=' for the default fatal errors");
		return -1;
	}
	return 0;
}

/* --open: serving the export is the command's business, not the recorder's */
struct open_opts {
	bool open;
	unsigned port;
};

static int parse_args(struct record_opts *o, struct open_opts *op, int argc, char **argv)
{
	int c;

	o->output = "gpubpf.sbt";
	o->ring_size = 0;	/* default below: it depends on --stack */
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
			double d;

			if (gb_parse_num(optarg, &d) || !(d > 0) || d > 86400 * 365) {
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
		case OPT_LAUNCH_RETS:
			o->launch_rets = true;
			break;
		case OPT_LIBS: {
			const char *bad = "";
			long m = libs_parse_oplibs(optarg, &bad);

			if (m <= 0) {
				gb_err("bad --libs '%s' (%s): give a list of cublas, cudnn, jit, e.g. --libs cublas,jit",
				       optarg, m < 0 ? bad : "empty");
				return -1;
			}
			o->no_oplibs = LIB_MASK_OPLIBS & ~(unsigned)m;
			break;
		}
		case OPT_NO_LIBS:
			o->no_oplibs = LIB_MASK_OPLIBS;
			break;
		case OPT_READY:
			o->ready_file = optarg;
			break;
		case OPT_CHILDREN:
			o->children = true;
			break;
		case OPT_ACK_DIR:
			o->ack_dir = optarg;
			break;
		case OPT_PERFETTO:
			o->perfetto = optarg;
			break;
		case OPT_OPEN:
			op->open = true;
			break;
		case OPT_OPEN_PORT:
			if (ui_serve_parse_port(optarg, &op->port))
				return -1;
			op->open = true;
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
		case OPT_NO_SYMBOLS:
			o->no_symbols = true;
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
		case OPT_FLIGHT:
			if (parse_secs(optarg, &o->flight_ns, "--flight", "--flight 30"))
				return -1;
			break;
		case OPT_FLIGHT_MEM:
			if (gb_parse_size(optarg, &v) || v < (1 << 20) || v > (64ull << 30)) {
				gb_err("bad --flight-mem '%s': give a size from 1M to 64G, e.g. 256M", optarg);
				return -1;
			}
			o->flight_mem = v;
			break;
		case OPT_TRIG_ERR:
			o->trigger_error = true;
			if (optarg && parse_codes(o, optarg))
				return -1;
			break;
		case OPT_TRIG_STUCK:
			if (parse_secs(optarg, &o->trigger_stuck_ns, "--trigger-stuck", "--trigger-stuck 60"))
				return -1;
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
	if (o->lean && !o->stack.set) {
		/* --lean: no stacks unless asked for (a stack needs the full record) */
		o->stack.mode = GB_STACK_NONE;
		o->stack.set = true;
	}
	/* a DWARF stack copy is kilobytes: the ring holds a few milliseconds of
	 * them at 8M, less than a busy machine can keep the collector waiting */
	if (!o->ring_size)
		o->ring_size = o->stack.set && o->stack.mode == GB_STACK_DWARF ?
			       RECORD_RING_DWARF : RECORD_RING_DEF;
	if (optind < argc) {
		o->cmd = argv + optind;
		if (!runnable(o->cmd[0])) {
			gb_err("cannot run '%s': %s; give a program's path or a command on PATH "
			       "(gpubpf record [OPTIONS] -- COMMAND [ARGS])", o->cmd[0],
			       strerror(errno ? errno : ENOENT));
			return -1;
		}
	}
	if (o->cupti_inject && !o->cupti_lib)
		o->cupti_lib = cupti_default_lib();
	if (o->cupti_inject && !o->cmd && o->cupti_lib[0] != '/') {
		static char abs_lib[4096];

		if (!realpath(o->cupti_lib, abs_lib)) {
			gb_err("cannot find --cupti-lib %s: %s; give the path of libgpubpf_cupti.so", o->cupti_lib,
			       strerror(errno));
			return -1;
		}
		o->cupti_lib = abs_lib;
	}
	if ((o->trigger_error || o->trigger_stuck_ns || o->flight_mem) && !o->flight_ns) {
		gb_err("--trigger-on-error, --trigger-stuck and --flight-mem belong to the flight recorder: add --flight SECS");
		return -1;
	}
	if (o->flight_ns && o->xray_dir) {
		gb_err("--xray-dir imports the logs into the trace at the end, and --flight writes none then: import them into a dump with gpubpf import");
		return -1;
	}
	if (o->flight_ns && o->perfetto) {
		gb_err("--perfetto exports the trace at the end, and --flight writes none then: export a dump with gpubpf export");
		return -1;
	}
	if (op->open && !o->perfetto) {
		gb_err("--open serves the Perfetto export: add --perfetto FILE");
		return -1;
	}
	if (o->trigger_error && !o->nerror_codes) {
		unsigned i;

		for (i = 0; i < gb_nfatal_errors && i < 32; i++)
			o->error_codes[o->nerror_codes++] = gb_fatal_errors[i].code;
	}
	if (o->flight_ns && !o->flight_mem)
		o->flight_mem = 64ull << 20;
	if (!o->all + !o->npids + !o->cmd != 2) {
		gb_err("choose one target: -a (every process), -p PID, or -- COMMAND");
		return -1;
	}
	if (o->children && !o->npids) {
		gb_err("--children goes with -p PID (-a has everyone, -- COMMAND follows its children already)");
		return -1;
	}
	if (o->ack_dir && !o->children) {
		gb_err("--ack-dir goes with -p PID --children");
		return -1;
	}
	return 0;
}

/*
 * -- CMD ended badly: one line, and its status for ours (the shell's
 * convention, 128 + the signal), so `gpubpf record -- job && next` stops
 * where `job && next` would. 0 when it exited 0.
 */
static int cmd_end(const struct record_opts *o)
{
	int st = o->cmd_wstatus;

	if (WIFEXITED(st) && WEXITSTATUS(st)) {
		gb_warn("'%s' exited with status %d (the trace is written: %s)", o->cmd[0], WEXITSTATUS(st),
			o->output);
		return WEXITSTATUS(st);
	}
	if (WIFSIGNALED(st)) {
		gb_warn("'%s' was killed by signal %d (%s); the trace is written and ends with its last calls: "
			"gpubpf view %s | tail", o->cmd[0], WTERMSIG(st), strsignal(WTERMSIG(st)), o->output);
		return 128 + WTERMSIG(st);
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct open_opts op = { .port = UI_SERVE_PORT };
	struct record_opts o = { 0 };
	int ret, cmd_said = 0;

	if (parse_args(&o, &op, argc, argv))
		return 2;
	ret = recorder_run(&o, argc, argv);
	if (!ret && o.cmd && o.cmd_ended)
		cmd_said = cmd_end(&o);
	if (!ret && o.perfetto) {
		char msg[512];

		if (gb_export_file(o.output, "perfetto", o.perfetto, &gb_cli_names, msg, sizeof(msg))) {
			gb_err("%s", msg);
			ret = 1;
		}
	}
	if (!ret && op.open) {
		/* the HTTP requests of ui.perfetto.dev are parsed with no capability at all */
		privs_limit(0);
		ret = ui_serve_file(o.perfetto, "application/octet-stream", op.port);
	}
	/* the trace is written: the status is the command's, as its shell would see it */
	return ret ? ret : cmd_said;
}
