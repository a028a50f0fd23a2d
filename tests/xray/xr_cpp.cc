// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// xr_cpp.cc - C++ names for the XRay importer tests: namespaces, a
// template, an overload and a method, so symbol names need demangling.
// Built by tests/integ/xray_import.sh with clang++ -fxray-instrument.
#include <cstdio>

namespace demo {
template <class T> struct box {
	T v;
	__attribute__((noinline)) T twice(int n) const { return v * n * 2; }
};

__attribute__((noinline)) long over(long x) { return x + 1; }
__attribute__((noinline)) long over(long x, long y) { return x + y; }
}

static volatile long sink;

int main()
{
	demo::box<long> b{3};

	for (int i = 0; i < 3; i++)
		sink += b.twice(i) + demo::over(i) + demo::over(i, 2);
	std::printf("sink %ld\n", (long)sink);
	return 0;
}
