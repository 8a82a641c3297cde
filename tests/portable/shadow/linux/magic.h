#error "linux/magic.h is Linux-only: not in a source macOS builds (tests/portable/poison.h)"
