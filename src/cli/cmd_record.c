// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_record.c - gpubpf record: options and help; the recording itself is
 * src/collect/recorder.c. With --perfetto, the export when it is done.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmds.h"
#include "collect/recorder.h"
#include "cupti/cupti_attach.h"
#include "exporters/export.h"
#include "core/util.h"

static const char usage_text[] =
"Usage: gpubpf record [OPTIONS] (-a | -p PID... | -- COMMAND [ARGS...])\n"
"\n"
"Trace GPU API calls (CUDA driver and runtime, HIP) with uprobes into a .sbt file.\n"
"\n"
"Targets:\n"
"  -a, --all              every process on the system, also those started later\n"
"                         (containers, wheels, static CUDA runtimes included)\n"
"  -p, --pid PID          a running process and its threads (repeatable); the\n"
"                         breakpoints go into these processes only\n"
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
"GPU code is found in the loader cache, standard directories, /usr/local/cuda*,\n"
"$CUDA_HOME, /opt/rocm*, the mappings of every running process, and then in every\n"
"file mapping the kernel reports (perf side-band events): a library dlopen'd later,\n"
"a container's own copy, an executable or library with nvcc's static runtime\n"
"(device code and a symbol table) are attached when mapped. -v says which source.\n"
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

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	int ret;

	if (parse_args(&o, argc, argv))
		return 2;
	ret = recorder_run(&o, argc, argv);
	if (!ret && o.perfetto) {
		char msg[512];

		if (gb_export_file(o.output, "perfetto", o.perfetto, msg, sizeof(msg))) {
			gb_err("%s", msg);
			ret = 1;
		}
	}
	return ret;
}
