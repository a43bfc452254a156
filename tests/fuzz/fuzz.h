/*
 * libFuzzer harnesses (tests/fuzz/fuzz_*.c). Built with clang
 * -fsanitize=fuzzer each file is one fuzzer whose entry point is
 * LLVMFuzzerTestOneInput; built with -DFUZZ_REGRESS the entry points get
 * their own names so tests/unit/test_fuzz_regress.c can link them all and
 * replay the corpora and every saved crash without libFuzzer.
 */
#ifndef TCQ_FUZZ_H
#define TCQ_FUZZ_H
#include <stddef.h>
#include <stdint.h>

#ifdef FUZZ_REGRESS
#define FUZZ_ENTRY(name) fuzz_##name##_one
#else
#define FUZZ_ENTRY(name) LLVMFuzzerTestOneInput
#endif

int fuzz_pdu_one(const uint8_t *data, size_t size);
int fuzz_param_one(const uint8_t *data, size_t size);
int fuzz_cdb_one(const uint8_t *data, size_t size);
int fuzz_conn_one(const uint8_t *data, size_t size);
/* One per entry point of issue 29, each named after what it drives. */
int fuzz_auth_chap_step_one(const uint8_t *data, size_t size);
int fuzz_pdu_decode_cmd_ahs_one(const uint8_t *data, size_t size);
int fuzz_pr_out_one(const uint8_t *data, size_t size);
int fuzz_sbc_extended_copy_one(const uint8_t *data, size_t size);
int fuzz_sbc_unmap_one(const uint8_t *data, size_t size);
int fuzz_spc_mode_select_one(const uint8_t *data, size_t size);
int fuzz_sbc_compare_and_write_one(const uint8_t *data, size_t size);
int fuzz_cfg_load_string_one(const uint8_t *data, size_t size);
int fuzz_bdev_opts_parse_one(const uint8_t *data, size_t size);
int fuzz_ctl_request_one(const uint8_t *data, size_t size);
int fuzz_native_sess_rx_one(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
