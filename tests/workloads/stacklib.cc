// stacklib.cc - a C++ shared library frame between stack_work and libcuda:
// its frames must be named (and demangled) from the library's own symbols.
#include "fake_cuda.h"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
static volatile int sink;

namespace stacklib {
__attribute__((noinline)) int submit(launch_fn fn, CUfunction f, int i)
{
	int r = fn(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);

	sink += r + i;
	return r;
}
}

extern "C" __attribute__((noinline)) int stacklib_submit(launch_fn fn, CUfunction f, int i)
{
	int r = stacklib::submit(fn, f, i);

	sink += r;
	return r + 1;
}
