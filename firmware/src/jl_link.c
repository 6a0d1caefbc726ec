/* The link side of the device: frames in (COBS, CRC, header and payload checks, sequence
 * numbers, counters; docs/protocol.md sections 2-5 and 8), each valid one handed to the
 * requests (jl_requests.c); replies go out through jl_reply.c. */
#include "jl_board.h"
#include "jl_device.h"
#include "jl_wire.h"

/* ------------------------------------------------------------------ frame checks */
/* Payload size of a host message: fixed (>= 0), or -(record size) for "1 + record·n";
 * -1000 for a (class, type) the protocol does not define from host to device. */
static int expected_size(uint8_t cls, uint8_t type)
{
    static const int8_t cmd[17] = {-1, 8, -4, 8, -4, 4, 8, -4, -1, -1, -1, -1, -1, -1, -1, -1, -20};
    static const int8_t req[25] = {-1, 1, 1, 0, 8, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                   1, 0, 0, 1, 0, 3, 2, 8, -8};
    if (cls == JL_CMD && type < 17 && (cmd[type] != -1 || type == 0))
        return type == 0 ? -1000 : cmd[type];
    if (cls == JL_REQ && type < 25 && type > 0 && req[type] != -1)
        return req[type];
    return -1000;
}

/* A good-CRC frame: parse, answer or act (sections 2 step 5, 8, 9). */
static void dispatch(const frame_t *f, size_t payload_len)
{
    bool reply_class = f->cls == JL_ACK || f->cls == JL_NACK;
    if (f->length != payload_len) {
        jl_dev.stats.malformed++;
        if (!reply_class)
            jl_nack(f, JL_NACK_BAD_LENGTH, -1);
        return;
    }
    if (reply_class) /* never answered */
        return;
    int size = expected_size(f->cls, f->type);
    if (size == -1000) {
        jl_dev.stats.unknown_types++;
        jl_nack(f, JL_NACK_UNSUPPORTED, -1);
        return;
    }
    bool hello = f->cls == JL_REQ && f->type == 16;
    if (f->version != JL_PROTOCOL_VERSION && !hello) {
        jl_dev.stats.version_mismatches++;
        jl_nack(f, JL_NACK_VERSION_MISMATCH, JL_PROTOCOL_VERSION);
        return;
    }
    const uint8_t *p = f->payload;
    bool ok_length = size >= 0 ? payload_len == (size_t)size
                               : (payload_len >= 1 && payload_len == 1u + (size_t)(-size) * p[0]);
    if (!ok_length) {
        jl_dev.stats.malformed++;
        jl_nack(f, JL_NACK_BAD_LENGTH, -1);
        return;
    }
    bool bad_value = (f->cls == JL_REQ && (f->type == 1 || f->type == 2 || f->type == 19) &&
                      p[0] > 1) ||
                     (f->cls == JL_REQ && f->type == 21 && p[2] > 1);
    if (bad_value) {
        jl_dev.stats.malformed++;
        jl_nack(f, JL_NACK_INVALID_VALUE, -1);
        return;
    }
    if (f->cls == JL_REQ) {
        jl_handle_req(f);
    } else if (f->type == 16) {
        jl_cmd_njoint(f);
    } else { /* the Player commands: not implemented by the reference firmware */
        jl_nack(f, JL_NACK_UNSUPPORTED, -1);
    }
}

static void sequence(uint16_t seq, const uint8_t *raw)
{
    bool hello = raw[1] == JL_REQ && raw[2] == 16;
    if (jl_dev.have_expected && seq != jl_dev.expected && !hello) {
        uint16_t delta = (uint16_t)(seq - jl_dev.expected);
        if (delta < 0x8000u) {
            jl_dev.stats.sequence_gaps++;
            jl_dev.stats.frames_missed += delta;
        } else {
            jl_dev.stats.out_of_order++;
        }
    }
    jl_dev.have_expected = true;
    jl_dev.expected = (uint16_t)(seq + 1);
}

/* One run between delimiters (COBS-encoded, decoded here in place). */
static void frame_run(uint8_t *run, size_t n)
{
    int m = jl_cobs_decode(run, n);
    if (m < 0) {
        jl_dev.stats.cobs_errors++;
        return;
    }
    if (m < JL_HEADER_SIZE + 2) {
        jl_dev.stats.runts++;
        return;
    }
    size_t trailer;
    if (run[0] == 1) {
        trailer = jl_crc16(run, (size_t)m) == 0 ? 2 : 0;
    } else {
        trailer = (m >= JL_HEADER_SIZE + 4 && jl_crc32(0, run, (size_t)m) == JL_CRC32_RESIDUE) ? 4
                                                                                             : 0;
    }
    if (!trailer) {
        jl_dev.stats.crc_errors++;
        return;
    }
    jl_dev.stats.frames++;
    frame_t f = {run[0], run[1], run[2], get_u16(run + 3), get_u16(run + 5), run + 7};
    sequence(f.seq, run);
    dispatch(&f, (size_t)m - JL_HEADER_SIZE - trailer);
}

void jl_receive(const uint8_t *data, size_t n)
{
    jl_dev.stats.bytes_received += (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = data[i];
        if (b == 0) {
            if (jl_dev.synced && !jl_dev.discarding && jl_dev.rx_len)
                frame_run(jl_dev.rx, jl_dev.rx_len);
            jl_dev.rx_len = 0;
            jl_dev.discarding = false;
            jl_dev.synced = true;
            continue;
        }
        if (!jl_dev.synced || jl_dev.discarding)
            continue;
        if (jl_dev.rx_len == sizeof jl_dev.rx) {
            jl_dev.stats.overruns++;
            jl_dev.discarding = true;
            jl_dev.rx_len = 0;
            continue;
        }
        jl_dev.rx[jl_dev.rx_len++] = b;
    }
}
