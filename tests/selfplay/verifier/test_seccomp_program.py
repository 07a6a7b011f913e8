"""The seccomp filter program itself, run by a small classic-BPF interpreter: its decision for
every system call number and argument that matters, on every architecture it knows."""

import errno
import struct

import pytest

from selfplay.verifier.inside import seccomp

DENY = seccomp.RET_USER_NOTIF
EPERM = seccomp.RET_ERRNO | errno.EPERM
ENOSYS = seccomp.RET_ERRNO | errno.ENOSYS


def run(program: bytes, nr: int, arch: int, args=(0,) * 6) -> int:
    """What the kernel would return for this call (struct seccomp_data as the filter sees it)."""
    args = [a & (2**64 - 1) for a in args] + [0] * (6 - len(args))
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    insns = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    assert len(insns) < 4096
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35, 0x45):  # jeq, jge, jset
            hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_every_system_call_number_gets_what_the_table_says(machine):
    audit_arch, _, table = seccomp.ARCHES[machine]
    program = seccomp.build(DENY, machine)
    by_number = {nr: name for name, nr in table.items()}
    denied = {table[n] for n in seccomp.DENIED if n in table}
    self_only = {table[n]: i for n, i in seccomp.SELF_ONLY}
    for nr in range(0, 1100):
        got = run(program, nr, audit_arch)
        name = by_number.get(nr, str(nr))
        if nr == table["clone3"]:
            assert got == ENOSYS, name
        elif nr in denied:
            assert got == DENY, name
        elif nr in self_only:
            assert got == seccomp.RET_ALLOW, name  # pid 0: the caller itself
            args = [0] * 6
            args[self_only[nr]] = 1234
            assert run(program, nr, audit_arch, args) == DENY, name
        elif nr == table["socket"]:
            for family in range(0, 46):
                want = seccomp.RET_ALLOW if family == 1 else DENY  # AF_UNIX only
                assert run(program, nr, audit_arch, (family, 1, 0, 0, 0, 0)) == want, family
        elif nr == table["clone"]:
            assert run(program, nr, audit_arch, (17,)) == seccomp.RET_ALLOW
            assert run(program, nr, audit_arch, (0x10000000 | 17,)) == DENY  # CLONE_NEWUSER
        else:
            assert got == seccomp.RET_ALLOW, name
    # Another ABI is refused whatever the number; so is the x32 ABI on x86-64.
    assert run(program, 0, audit_arch ^ 1) == EPERM
    if machine == "x86_64":
        assert run(program, 0x40000000 | 0, audit_arch) == EPERM


def test_a_call_is_decided_in_a_handful_of_comparisons():
    # The kernel runs the program once per system call number when it is installed, and every
    # call of a row runs it again: a linear list of seventy comparisons cost a tenth of a
    # millisecond per row to install.
    audit_arch, _, _ = seccomp.ARCHES["x86_64"]
    program = seccomp.build(DENY, "x86_64")
    insns = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]

    def steps(nr):
        data = struct.pack("<iIQ6Q", nr, audit_arch, 0, *(0,) * 6)
        acc, pc, n = 0, 0, 0
        while insns[pc][0] != 0x06:
            code, jt, jf, k = insns[pc]
            n += 1
            if code == 0x20:
                acc = struct.unpack_from("<I", data, k)[0]
                pc += 1
            else:
                hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
                pc += 1 + (jt if hit else jf)
        return n

    assert max(steps(nr) for nr in range(0, 500)) <= 16


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_the_zygotes_own_calls_pass_by_their_exact_arguments_only(machine):
    # The zygote carries the filter too: its namespace and mount calls pass by their exact
    # arguments (the kernel still refuses them to a row, which has no capabilities);
    # anything else, a new user namespace above all, is refused.
    audit_arch, _, table = seccomp.ARCHES[machine]
    program = seccomp.build(DENY, machine)
    for name, (index, values) in seccomp.ZYGOTE_CALLS.items():
        for value in values:
            args = [0] * 6
            args[index] = value
            assert run(program, table[name], audit_arch, args) == seccomp.RET_ALLOW, name
            for other in (0, value | 0x10000000, value + 1):  # 0x10000000: CLONE_NEWUSER
                if other not in values:
                    args[index] = other
                    assert run(program, table[name], audit_arch, args) == DENY, (name, other)
