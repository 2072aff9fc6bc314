// The C interface of librlwb_sentencepiece.so, the one place that links
// Debian's libsentencepiece. That library carries its own copy of protobuf
// (3.14) with exported symbols, which cannot share a process's global
// symbol scope with the system protobuf that RLWB links (the profiler's
// pprof export): the version check aborts at load. So RLWB never links it:
// sentencepiece_library.cpp dlopens this shim with RTLD_LOCAL |
// RTLD_DEEPBIND, which makes the shim and libsentencepiece bind to their
// own protobuf, and calls these functions. Plain C types only, so nothing
// of either protobuf crosses the boundary.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

// A model from the bytes of a tokenizer.model; null on failure, with the
// library's message in error (NUL-terminated, cut to error_size).
void* rlwb_sp_load(const char* bytes, size_t size, char* error, size_t error_size);
void rlwb_sp_free(void* model);

// The number of pieces (ids 0..n-1) and the ids the model reserves (-1: none).
int32_t rlwb_sp_piece_count(const void* model);
void rlwb_sp_reserved_ids(const void* model, int32_t* unk, int32_t* bos, int32_t* eos, int32_t* pad);

// text as the library encodes it (its normalizer, dummy prefix, BPE or
// unigram). Writes up to capacity ids and returns how many there are (call
// again with more room when that is larger), or -1 with the message in error.
int64_t rlwb_sp_encode(const void* model, const char* text, size_t size, int32_t* ids, size_t capacity,
                       char* error, size_t error_size);
}
