/* Cortex-M3 start-up for mps2-an385: vector table, .data/.bss set-up, then main(). */
#include <stdint.h>

extern uint32_t _stack_top, _data_load, _data_start, _data_end, _bss_start, _bss_end;
int main(void);
void systick_handler(void);
void reset_handler(void);

static void fault_handler(void)
{
    for (;;)
        ;
}

/* External interrupts 0-7 (the CMSDK UARTs' RX and TX on mps2-an385): a board that enables
 * one in the NVIC defines irq_handler; the others never enable them. */
static void no_irq(void) {}
void irq_handler(void) __attribute__((weak, alias("no_irq")));

__attribute__((section(".vectors"), used)) static const void *const vectors[24] = {
    &_stack_top,   reset_handler, fault_handler, fault_handler,  fault_handler, fault_handler,
    fault_handler, 0,             0,             0,              0,             fault_handler,
    fault_handler, 0,             fault_handler, systick_handler, irq_handler,  irq_handler,
    irq_handler,   irq_handler,   irq_handler,   irq_handler,    irq_handler,   irq_handler,
};

void reset_handler(void)
{
    uint32_t *src = &_data_load, *dst = &_data_start;
    while (dst < &_data_end)
        *dst++ = *src++;
    for (dst = &_bss_start; dst < &_bss_end;)
        *dst++ = 0;
    main();
    fault_handler();
}
