/* CRC-32, CRC-16/CCITT-FALSE and COBS as docs/protocol.md sections 2 and 4 define them. */
#include "jl_wire.h"

uint32_t jl_crc32(uint32_t crc, const uint8_t *data, size_t n)
{
    /* Nibble table: 64 bytes of flash, two lookups a byte (a 1 KiB table is faster). */
    static const uint32_t table[16] = {
        0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
        0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
        0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
    };
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= data[i];
        crc = (crc >> 4) ^ table[crc & 15u];
        crc = (crc >> 4) ^ table[crc & 15u];
    }
    return ~crc;
}

uint16_t jl_crc16(const uint8_t *data, size_t n)
{
    uint16_t crc = 0xFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(data[i] << 8);
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

size_t jl_cobs_encode(const uint8_t *src, size_t n, uint8_t *dst)
{
    size_t code_at = 0, out = 1;
    uint8_t code = 1;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == 0) {
            dst[code_at] = code;
            code_at = out++;
            code = 1;
            continue;
        }
        dst[out++] = src[i];
        if (++code == 0xFF) {
            dst[code_at] = code;
            code_at = out++;
            code = 1;
        }
    }
    dst[code_at] = code;
    return out;
}

int jl_cobs_decode(uint8_t *buf, size_t n)
{
    size_t in = 0, out = 0;
    while (in < n) {
        uint8_t code = buf[in++];
        if (code == 0 || in + code - 1u > n)
            return -1;
        for (uint8_t k = 1; k < code; k++) {
            if (buf[in] == 0)
                return -1;
            buf[out++] = buf[in++];
        }
        if (code != 0xFF && in < n)
            buf[out++] = 0;
    }
    return (int)out;
}
