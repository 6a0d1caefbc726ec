/* Wire primitives of protocol v2 (docs/protocol.md sections 2 and 4): CRC-32, CRC-16, COBS. */
#ifndef JL_WIRE_H
#define JL_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, zlib.crc32) of data; chain calls by passing the previous value. */
uint32_t jl_crc32(uint32_t crc, const uint8_t *data, size_t n);
/* CRC-32 of a frame body followed by its own little-endian CRC-32. */
#define JL_CRC32_RESIDUE 0x2144DF1Cu
/* CRC-16/CCITT-FALSE (binascii.crc_hqx(data, 0xFFFF)), the CRC of HELLO frames. */
uint16_t jl_crc16(const uint8_t *data, size_t n);
/* COBS-encode n bytes of src into dst (at most n + n/254 + 1 bytes); returns the length. */
size_t jl_cobs_encode(const uint8_t *src, size_t n, uint8_t *dst);
/* COBS-decode n bytes in place (no 0x00 inside); returns the decoded length, or -1 for
 * invalid COBS (a code byte pointing past the end). */
int jl_cobs_decode(uint8_t *buf, size_t n);

#endif
