// GPUWattch's per-event energies for a GPUWattch XML: McPAT's energy of each counted event
// x the XML's scaling coefficient, as gpgpu_sim_wrapper::update_coefficients computes them.
// Built against GPGPU-Sim's src/gpuwattch by build.sh (docs/energy.md, "Power split").
#include <iostream>
#include <cstdio>
#include "XML_Parse.h"
#include "processor.h"
#include "globalvar.h"
int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s gpuwattch_config.xml\n", argv[0]);
    return 2;
  }
  opt_for_clk = true;
  ParseXML *p = new ParseXML();
  p->parse(argv[1]);
  // a sample period, as the wrapper sets before computing (the DRAM PHY term divides by it)
  p->sys.total_cycles = 500; p->sys.core[0].total_cycles = 500; p->sys.core[0].busy_cycles = 500;
  Processor proc(p);
  Core *c = proc.cores[0];
  double r = c->exu->rf_fu_clockRate / c->exu->clockRate;
  double *s = p->sys.scaling_coefficients;
  struct { const char *n; double e; int k; } rows[] = {
    {"TOT_INST", c->get_coefficient_tot_insts(), TOT_INST},
    {"FP_INT", c->get_coefficient_fpint_insts(), FP_INT},
    {"IC_H", c->get_coefficient_icache_hits(), IC_H},
    {"IC_M", c->get_coefficient_icache_misses(), IC_M},
    {"DC_RH", c->get_coefficient_dcache_readhits() + proc.get_coefficient_readcoalescing(), DC_RH},
    {"DC_RM", c->get_coefficient_dcache_readmisses() + proc.get_coefficient_readcoalescing(), DC_RM},
    {"DC_WH", c->get_coefficient_dcache_writehits() + proc.get_coefficient_writecoalescing(), DC_WH},
    {"DC_WM", c->get_coefficient_dcache_writemisses() + proc.get_coefficient_writecoalescing(), DC_WM},
    {"CC_H", c->get_coefficient_ccache_readhits() + proc.get_coefficient_readcoalescing(), CC_H},
    {"CC_M", c->get_coefficient_ccache_readmisses() + proc.get_coefficient_readcoalescing(), CC_M},
    {"SHRD_ACC", c->get_coefficient_sharedmemory_readhits(), SHRD_ACC},
    {"REG_RD", c->get_coefficient_regreads_accesses() * r, REG_RD},
    {"REG_WR", c->get_coefficient_regwrites_accesses() * r, REG_WR},
    {"NON_REG_OPs", c->get_coefficient_noregfileops_accesses() * r, NON_REG_OPs},
    {"SP_ACC", c->get_coefficient_ialu_accesses() * r, SP_ACC},
    {"SFU_ACC", c->get_coefficient_sfu_accesses(), SFU_ACC},
    {"FPU_ACC", c->get_coefficient_fpu_accesses(), FPU_ACC},
    {"L2_RH", proc.get_coefficient_l2_read_hits(), L2_RH},
    {"L2_RM", proc.get_coefficient_l2_read_misses(), L2_RM},
    {"L2_WH", proc.get_coefficient_l2_write_hits(), L2_WH},
    {"L2_WM", proc.get_coefficient_l2_write_misses(), L2_WM},
    {"NOC_A", proc.get_coefficient_noc_accesses(), NOC_A},
    {"MEM_RD", proc.get_coefficient_mem_reads(), MEM_RD},
    {"MEM_WR", proc.get_coefficient_mem_writes(), MEM_WR},
    {"MEM_PRE", proc.get_coefficient_mem_pre(), MEM_PRE},
  };
  printf("%-12s %14s %10s %14s\n", "counter", "mcpat_pJ", "scale", "gpuwattch_pJ");
  for (auto &row : rows)
    printf("%-12s %14.4f %10.3f %14.4f\n", row.n, row.e * 1e12, s[row.k], row.e * s[row.k] * 1e12);
  double bank_rd = c->exu->rfu->IRF->local_result.power.readOp.dynamic / 32 * 8 * r;
  double rest_rd = c->get_coefficient_regreads_accesses() * r - bank_rd;
  printf("REG_RD_bank_pJ %.4f REG_RD_xbar_arb_opc_pJ %.4f (McPAT, before scaling)\n", bank_rd * 1e12, rest_rd * 1e12);
  printf("idle_core_power_W %g\nCONST_DYNAMICN_W %g\n",
         p->sys.idle_core_power, s[CONST_DYNAMICN]);
  return 0;
}
