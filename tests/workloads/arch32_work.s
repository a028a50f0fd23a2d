# i386 program that waits in pause(2) forever (tests/integ/cupti_inject_refuse.sh: another
# architecture); built with binutils alone, no 32-bit libc needed
.globl _start
_start:
	movl $29, %eax
	int $0x80
	jmp _start
