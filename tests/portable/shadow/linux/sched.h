#error "linux/sched.h is Linux-only: not in a source macOS builds (tests/portable/poison.h)"
