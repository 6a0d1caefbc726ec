/* Processor-in-the-loop board for QEMU's mps2-an385 (Cortex-M3): CMSDK UART0 to the host
 * (protocol v2, as on board_mps2.c), CMSDK UART1 to the plant, JointLab's physics in a
 * process on the other end of a QEMU chardev (docs/firmware.md, "Processor in the loop").
 *
 * The motor outputs and encoder inputs are the plant link: at every tick the torques the
 * core computed go out in a STEP frame and the tick waits for the STATE frame the plant
 * answers after exactly one physics step, so the firmware and the physics advance in
 * lockstep whatever the speed of either. At boot a HELLO frame asks the plant for the
 * initial state and the mode: lockstep (ticks on the host's REQ STEP, virtual time) or real
 * time (ticks on SysTick at rate_hz).
 */
#include <stdint.h>
#include <string.h>

#include "jl_board.h"
#include "jl_core.h"
#include "jl_robot.h"
#include "jl_wire.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define UART_HOST 0x40004000u  /* UART0: -serial #1 */
#define UART_PLANT 0x40005000u /* UART1: -serial #2 */
#define UART_DATA(u) REG((u) + 0x00)
#define UART_STATE(u) REG((u) + 0x04) /* bit 0: TX full, bit 1: RX full */
#define UART_CTRL(u) REG((u) + 0x08)  /* bit 0: TX enable, bit 1: RX enable */
#define UART_BAUDDIV(u) REG((u) + 0x10)
#define UART_INTCLEAR(u) REG((u) + 0x0C) /* bit 1: RX interrupt */
#define NVIC_ISER0 REG(0xE000E100u)
#define UART0_RX_IRQ 0 /* mps2-an385: UARTn's RX interrupt is 2n */
#define UART1_RX_IRQ 2
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define CPU_HZ 25000000u

/* ---- plant-link frames (docs/firmware.md): COBS(body + CRC-32 LE) 0x00, body =
 * type u8 | tick u32 | flags u8 | n u8 | float32 values, little-endian: STEP torque[n];
 * SET q[n] qd[n]; STATE q[n] qd[n] tau[n] (the torque the plant's actuators applied). */
enum { PL_HELLO = 1, PL_STEP = 2, PL_SET = 3, PL_STATE = 0x81 };
enum { PL_POWER = 1, PL_BRAKES = 2 }; /* STEP flags */
#define PL_LOCKSTEP 1                 /* STATE flag, in the answer to HELLO */
#define PL_HEADER 7
#define PL_MAX_BODY (PL_HEADER + 12 * JL_MAX_DOF + 4)
#define PL_MAX_ENCODED (PL_MAX_BODY + PL_MAX_BODY / 254 + 2)

static volatile uint32_t ticks_due;
static float q[JL_MAX_DOF], qd[JL_MAX_DOF], tau_applied[JL_MAX_DOF];
static uint8_t flags = PL_POWER;
static uint32_t stepped_tick; /* the last tick the plant stepped for */
static bool lockstep;
/* Plant frames received damaged and asked again (a debugger can read it). */
volatile uint32_t jl_plant_retries;

void systick_handler(void) { ticks_due++; }

/* A received byte only wakes the core from WFI; the main loop reads it. */
void irq_handler(void)
{
    UART_INTCLEAR(UART_HOST) = 2u;
    UART_INTCLEAR(UART_PLANT) = 2u;
}

static void uart_init(uint32_t u)
{
    UART_BAUDDIV(u) = 16;
    UART_CTRL(u) = 3u | 8u; /* TX, RX, RX interrupt */
}

/* Sleep until an interrupt is pending (a byte on a UART, SysTick) unless `ready` holds.
 * Interrupts are masked around the check and WFI, so a byte arriving between the two still
 * ends the WFI: no wake-up is lost. QEMU then runs its I/O instead of a polling loop. */
static void wait_for(uint32_t u, uint32_t ready_bits)
{
    __asm volatile("cpsid i" ::: "memory");
    if (!(UART_STATE(u) & ready_bits) && !ticks_due)
        __asm volatile("wfi" ::: "memory");
    __asm volatile("cpsie i" ::: "memory");
}

static void uart_put(uint32_t u, const uint8_t *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        while (UART_STATE(u) & 1u)
            ;
        UART_DATA(u) = data[i];
    }
}

static uint8_t uart_get(uint32_t u)
{
    while (!(UART_STATE(u) & 2u))
        wait_for(u, 2u);
    return (uint8_t)UART_DATA(u);
}

static uint8_t *put_le32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return b + 4;
}

static uint32_t get_le32(const uint8_t *b)
{
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}

static void plant_send(uint8_t type, uint32_t tick, const float *a, const float *b)
{
    static uint8_t body[PL_MAX_BODY], encoded[PL_MAX_ENCODED];
    int n = JL_ROBOT.dof;
    uint8_t *p = body;
    *p++ = type;
    p = put_le32(p, tick);
    *p++ = flags;
    *p++ = (uint8_t)n;
    for (int k = 0; k < 2; k++) {
        const float *v = k ? b : a;
        for (int i = 0; v && i < n; i++) {
            uint32_t bits;
            memcpy(&bits, &v[i], 4);
            p = put_le32(p, bits);
        }
    }
    p = put_le32(p, jl_crc32(0, body, (size_t)(p - body)));
    size_t len = jl_cobs_encode(body, (size_t)(p - body), encoded);
    encoded[len++] = 0;
    uart_put(UART_PLANT, encoded, len);
}

/* Wait for one frame from the plant; true when it is the STATE answering `tick`. */
static bool plant_receive(uint32_t tick, uint8_t *state_flags)
{
    static uint8_t run[PL_MAX_ENCODED];
    size_t len = 0;
    bool overrun = false;
    for (uint8_t byte; (byte = uart_get(UART_PLANT)) != 0;) {
        if (len < sizeof run)
            run[len++] = byte;
        else
            overrun = true;
    }
    int n = JL_ROBOT.dof, size = PL_HEADER + 12 * n + 4;
    int decoded = overrun ? -1 : jl_cobs_decode(run, len);
    if (decoded != size || jl_crc32(0, run, (size_t)size) != JL_CRC32_RESIDUE ||
        run[0] != PL_STATE || get_le32(run + 1) != tick || run[6] != n)
        return false;
    *state_flags = run[5];
    for (int i = 0; i < n; i++) {
        uint32_t a = get_le32(run + PL_HEADER + 4 * i), b = get_le32(run + PL_HEADER + 4 * (n + i)),
                 c = get_le32(run + PL_HEADER + 4 * (2 * n + i));
        memcpy(&q[i], &a, 4);
        memcpy(&qd[i], &b, 4);
        memcpy(&tau_applied[i], &c, 4);
    }
    return true;
}

/* One request and its STATE; a damaged answer asks again (STEP is idempotent per tick). */
static uint8_t plant_exchange(uint8_t type, uint32_t tick, const float *a, const float *b)
{
    uint8_t state_flags = 0;
    for (;;) {
        plant_send(type, tick, a, b);
        if (plant_receive(tick, &state_flags))
            return state_flags;
        jl_plant_retries++;
    }
}

/* ---- the board layer ---- */
void jl_board_uart_write(const uint8_t *data, size_t n) { uart_put(UART_HOST, data, n); }

void jl_board_read_joints(float *q_out, float *qd_out)
{
    for (int i = 0; i < JL_ROBOT.dof; i++)
        q_out[i] = q[i], qd_out[i] = qd[i];
}

/* Torque feedback: what the plant's actuators produced in the last step. */
void jl_board_read_torque(float *tau)
{
    for (int i = 0; i < JL_ROBOT.dof; i++)
        tau[i] = tau_applied[i];
}

/* The motor outputs: at a new tick, one physics step with these torques. */
void jl_board_set_torque(const float *tau)
{
    uint32_t tick = (uint32_t)jl_tick_count();
    if (tick == stepped_tick)
        return; /* jl_init's zero torque: the plant has not started */
    stepped_tick = tick;
    plant_exchange(PL_STEP, tick, tau, 0);
}

void jl_board_set_state(const float *q_in, const float *qd_in)
{
    plant_exchange(PL_SET, (uint32_t)jl_tick_count(), q_in, qd_in);
}

void jl_board_set_power(bool on) { flags = (uint8_t)(on ? flags | PL_POWER : flags & ~PL_POWER); }
void jl_board_set_brakes(bool engaged)
{
    flags = (uint8_t)(engaged ? flags | PL_BRAKES : flags & ~PL_BRAKES);
}

int main(void)
{
    uart_init(UART_HOST);
    uart_init(UART_PLANT);
    NVIC_ISER0 = (1u << UART0_RX_IRQ) | (1u << UART1_RX_IRQ);
    static const uint8_t delimiter = 0;
    uart_put(UART_PLANT, &delimiter, 1); /* a frame boundary, as on the host link */
    lockstep = plant_exchange(PL_HELLO, 0, 0, 0) & PL_LOCKSTEP;
    jl_init(&JL_ROBOT);
    jl_set_lockstep(lockstep);
    if (!lockstep) {
        SYST_RVR = CPU_HZ / JL_ROBOT.rate_hz - 1u;
        SYST_CVR = 0;
        SYST_CSR = 7u; /* processor clock, interrupt, enable */
    }
    for (;;) {
        while (UART_STATE(UART_HOST) & 2u) {
            uint8_t byte = (uint8_t)UART_DATA(UART_HOST);
            jl_receive(&byte, 1); /* in lockstep, a REQ STEP runs its ticks here */
        }
        if (ticks_due) {
            ticks_due = 0; /* after a stall, resume; never burst-catch-up */
            jl_tick();
        }
        wait_for(UART_HOST, 2u);
    }
}
