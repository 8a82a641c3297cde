/* libFuzzer: the stockade.ini loader. Any bytes: parsed with every value
 * checked, then each section made a layer, as a run would. Nothing may
 * crash, leak or read out of bounds (ASan, UBSan); an error must name a
 * line within the file. make fuzz runs it for FUZZ_TIME seconds on the
 * corpus in tests/fuzz/conf-load/. */
#include <stdint.h>

#include "conf/conf.h"
#include "lib/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf_file f;
	struct conf_error e;
	int r = conf_parse("/fuzz/stockade.ini", (const char *)data, size, &f, &e);
	if (r < 0) {
		size_t lines = 1;
		for (size_t i = 0; i < size; i++)
			lines += data[i] == '\n';
		if (!e.msg || !e.file || e.line > lines)
			__builtin_trap();
		conf_error_free(&e);
		return 0;
	}
	for (size_t i = 0; i < f.n; i++) {
		struct layer l;
		conf_section_layer(&f, &f.v[i], &l);
		if (conf_find_section(&f, f.v[i].kind, f.v[i].name) == NULL)
			__builtin_trap();
		layer_free(&l);
	}
	conf_file_free(&f);
	return 0;
}
