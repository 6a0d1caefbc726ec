/* Replies out: the frame the device sends, and the ACK/NACK echo (docs/protocol.md sections
 * 2, 4 and 8). Below the core and the requests, which answer through it, and the link. */
#include "jl_board.h"
#include "jl_device.h"
#include "jl_wire.h"

/* ------------------------------------------------------------------ sending */
/* Send the frame whose payload was written at jl_dev.body + 7 (length bytes). */
void jl_send(uint8_t cls, uint8_t type, uint16_t length, bool hello_format)
{
    uint8_t *h = jl_dev.body;
    h[0] = hello_format ? 1 : JL_PROTOCOL_VERSION;
    h[1] = cls;
    h[2] = type;
    put_u16(h + 3, jl_dev.tx_seq++);
    put_u16(h + 5, length);
    size_t n = JL_HEADER_SIZE + length;
    if (hello_format) {
        uint16_t crc = jl_crc16(h, n);
        h[n++] = (uint8_t)(crc >> 8);
        h[n++] = (uint8_t)crc;
    } else {
        put_u32(h + n, jl_crc32(0, h, n));
        n += 4;
    }
    jl_dev.tx[0] = 0;
    size_t m = jl_cobs_encode(h, n, jl_dev.tx + 1);
    jl_dev.tx[m + 1] = 0;
    jl_board_uart_write(jl_dev.tx, m + 2);
    jl_dev.stats.frames_sent++;
}

uint8_t *jl_echo(const frame_t *f)
{
    uint8_t *b = jl_dev.body + JL_HEADER_SIZE;
    b[0] = f->cls;
    b[1] = f->type;
    return put_u16(b + 2, f->seq);
}

void jl_ack(const frame_t *f)
{
    jl_echo(f);
    jl_send(JL_ACK, 0, 4, false);
}

void jl_nack(const frame_t *f, uint8_t reason, int32_t detail)
{
    uint8_t *b = jl_echo(f);
    b[0] = reason;
    put_u32(b + 1, (uint32_t)detail);
    jl_send(JL_NACK, 0, 9, false);
    if (f->cls == JL_CMD)
        jl_dev.stats.commands_refused++;
}
