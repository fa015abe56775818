/* tlpsim's stand-in for cuRAND's host library (libcurand.so.10), linked by `-lcurand`.
 *
 * NVIDIA's libcurand generates on the GPU through the driver, which tlpsim does not
 * have; this library generates the same generators' numbers on the host and copies
 * them to the device with cudaMemcpy (tlpsim's runtime), or writes them in place for
 * curandCreateGeneratorHost. Generators: XORWOW (the default), MRG32k3a and
 * Philox4_32_10, with cuRAND's seeding (the device API's curand_init), in the output order
 * of NVIDIA's host library (many generator threads interleaved: "positions" below and
 * docs/exec.md). Normal values come in Box-Muller pairs made by one generator thread.
 */

#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* curand.h's types and values (the header comes with the nvidia-curand wheel, which building
   tlpsim does not require; programs compile against the real header) */
typedef enum {
    CURAND_STATUS_SUCCESS = 0, CURAND_STATUS_NOT_INITIALIZED = 101, CURAND_STATUS_ALLOCATION_FAILED = 102,
    CURAND_STATUS_TYPE_ERROR = 103, CURAND_STATUS_OUT_OF_RANGE = 104, CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,
    CURAND_STATUS_LAUNCH_FAILURE = 201
} curandStatus_t;
typedef enum {
    CURAND_RNG_PSEUDO_DEFAULT = 100, CURAND_RNG_PSEUDO_XORWOW = 101, CURAND_RNG_PSEUDO_MRG32K3A = 121,
    CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161
} curandRngType_t;
typedef enum {
    CURAND_ORDERING_PSEUDO_BEST = 100, CURAND_ORDERING_PSEUDO_DEFAULT = 101, CURAND_ORDERING_PSEUDO_LEGACY = 103
} curandOrdering_t;
typedef struct curandGenerator_st *curandGenerator_t;
#define CURAND_VERSION (10 * 1000 + 4 * 100 + 4) /* the pinned nvidia-curand 10.4.4's headers */

#define EXPORT __attribute__((visibility("default")))
#define STREAMS 4096
#define M1 4294967087ULL
#define M2 4294944443ULL

typedef unsigned __int128 u128;

struct curandGenerator_st {
    curandRngType_t type;
    int host;                      /* curandCreateGeneratorHost: output in host memory */
    unsigned long long seed, offset;
    cudaStream_t stream;
    int ready;                     /* per-stream states built for (seed) */
    uint32_t (*xw)[6];             /* XORWOW: v[5], d per subsequence */
    uint64_t (*mrg)[6];            /* MRG32k3a: s1[3], s2[3] per subsequence */
    uint64_t *pos;                 /* next draw of each subsequence */
};

/* ------------------------------------------------------------------ XORWOW */

static void xw_step_linear(uint32_t v[5])
{
    uint32_t t = v[0] ^ (v[0] >> 2);
    v[0] = v[1]; v[1] = v[2]; v[2] = v[3]; v[3] = v[4];
    v[4] = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
}

static uint32_t xw_next(uint32_t s[6])
{
    xw_step_linear(s);
    s[5] += 362437;
    return s[4] + s[5];
}

/* a 160 x 160 GF(2) matrix as 160 columns of five words */
typedef uint32_t gf_mat[160][5];

static void gf_apply(const gf_mat a, const uint32_t x[5], uint32_t out[5])
{
    uint32_t r[5] = {0, 0, 0, 0, 0};
    for (int j = 0; j < 160; j++)
        if (x[j / 32] >> (j % 32) & 1)
            for (int w = 0; w < 5; w++) r[w] ^= a[j][w];
    memcpy(out, r, sizeof r);
}

static gf_mat xw_jump; /* T^(2^67): one subsequence */
static int xw_jump_ready;

static void xw_make_jump(void)
{
    static gf_mat sq;
    for (int j = 0; j < 160; j++) {
        uint32_t v[5] = {0, 0, 0, 0, 0};
        v[j / 32] = 1u << (j % 32);
        xw_step_linear(v);
        memcpy(xw_jump[j], v, sizeof v);
    }
    for (int k = 0; k < 67; k++) {
        for (int j = 0; j < 160; j++) gf_apply(xw_jump, xw_jump[j], sq[j]);
        memcpy(xw_jump, sq, sizeof sq);
    }
    xw_jump_ready = 1;
}

static void xw_seed(unsigned long long seed, uint32_t s[6])
{
    uint32_t s0 = (uint32_t)seed ^ 0xaad26b49u, s1 = (uint32_t)(seed >> 32) ^ 0xf7dcefddu;
    uint32_t t0 = 1099087573u * s0, t1 = 2591861531u * s1;
    s[0] = 123456789u + t0; s[1] = 362436069u ^ t0; s[2] = 521288629u + t1; s[3] = 88675123u ^ t1;
    s[4] = 5783321u + t0; s[5] = 6615241u + t1 + t0;
}

/* ------------------------------------------------------------------ MRG32k3a */

static const uint64_t A1[3][3] = {{0, 1, 0}, {0, 0, 1}, {M1 - 810728, 1403580, 0}};
static const uint64_t A2[3][3] = {{0, 1, 0}, {0, 0, 1}, {M2 - 1370589, 0, 527612}};

static void mat3_mul(const uint64_t a[3][3], const uint64_t b[3][3], uint64_t m, uint64_t out[3][3])
{
    uint64_t r[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            u128 acc = 0;
            for (int k = 0; k < 3; k++) acc += (u128)a[i][k] * b[k][j];
            r[i][j] = (uint64_t)(acc % m);
        }
    memcpy(out, r, sizeof r);
}

static void mat3_vec(const uint64_t a[3][3], uint64_t v[3], uint64_t m)
{
    uint64_t r[3];
    for (int i = 0; i < 3; i++) {
        u128 acc = 0;
        for (int k = 0; k < 3; k++) acc += (u128)a[i][k] * v[k];
        r[i] = (uint64_t)(acc % m);
    }
    memcpy(v, r, sizeof r);
}

static uint64_t J1[3][3], J2[3][3]; /* A^(2^76): one subsequence */
static int mrg_jump_ready;

static void mrg_make_jump(void)
{
    memcpy(J1, A1, sizeof J1);
    memcpy(J2, A2, sizeof J2);
    for (int k = 0; k < 76; k++) {
        mat3_mul(J1, J1, M1, J1);
        mat3_mul(J2, J2, M2, J2);
    }
    mrg_jump_ready = 1;
}

static void mrg_seed(unsigned long long seed, uint64_t s[6])
{
    for (int i = 0; i < 6; i++) s[i] = 12345;
    if (seed) {
        uint64_t x1 = (uint32_t)seed ^ 0x55555555u, x2 = (uint32_t)(seed >> 32) ^ 0xaaaaaaaau;
        s[0] = x1 * 12345 % M1; s[1] = x2 * 12345 % M1; s[2] = x1 * 12345 % M1;
        s[3] = x2 * 12345 % M2; s[4] = x1 * 12345 % M2; s[5] = x2 * 12345 % M2;
    }
}

static uint64_t mrg_raw(uint64_t s[6])
{
    uint64_t p1 = (uint64_t)(((u128)1403580 * s[1] + (u128)(M1 - 810728) * s[0]) % M1);
    s[0] = s[1]; s[1] = s[2]; s[2] = p1;
    uint64_t p2 = (uint64_t)(((u128)527612 * s[5] + (u128)(M2 - 1370589) * s[3]) % M2);
    s[3] = s[4]; s[4] = s[5]; s[5] = p2;
    return p1 > p2 ? p1 - p2 : p1 + M1 - p2;
}

/* ------------------------------------------------------------------ Philox4x32-10 */

static void philox(const uint32_t ctr[4], uint32_t k0, uint32_t k1, uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int r = 0; r < 10; r++) {
        if (r) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0; c1 = (uint32_t)p1; c2 = n2; c3 = (uint32_t)p0;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* ------------------------------------------------------------------ positions
 *
 * NVIDIA's host generators run a fixed set of generator threads (docs/exec.md, "cuRAND"):
 * XORWOW and MRG32k3a thread t draws from subsequence t, Philox thread t from subsequence t,
 * four values per counter. Output position n (the generator's offset plus the index in
 * the call) is, for 32-bit and uniform values,
 *   XORWOW, MRG32k3a: draw n / THREADS of subsequence n mod THREADS;
 *   Philox:           value n mod 4 of counter (n / 4) / THREADS of subsequence (n / 4) mod THREADS.
 * Normals come in Box-Muller pairs. XORWOW and MRG32k3a: one generator thread makes both
 * values of a pair; thread t makes pairs t, t + THREADS, t + 2 THREADS, ... of the call
 * from subsequence (offset + t) mod THREADS, starting at draw (offset + t) / THREADS and
 * taking two draws per pair. Philox: a pair is two consecutive positions. The thread counts below are the ones the H200's
 * output pins down or bounds (tests/cudart/h200/curand_host.stdout). */

#define XORWOW_THREADS 4096   /* NVIDIA's documented legacy/default XORWOW ordering */
#define MRG_THREADS 16384     /* > 8207 on the H200; the exact count is not yet measured */
#define PHILOX_THREADS 4096   /* > 2052 on the H200; the exact count is not yet measured */

static unsigned threads(const struct curandGenerator_st *g)
{
    return g->type == CURAND_RNG_PSEUDO_XORWOW ? XORWOW_THREADS
         : g->type == CURAND_RNG_PSEUDO_MRG32K3A ? MRG_THREADS : PHILOX_THREADS;
}

static curandStatus_t prepare(curandGenerator_t g)
{
    if (g->ready || g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10)
        return CURAND_STATUS_SUCCESS;
    unsigned n = threads(g);
    g->pos = calloc(n, sizeof *g->pos);
    if (!g->pos)
        return CURAND_STATUS_ALLOCATION_FAILED;
    if (g->type == CURAND_RNG_PSEUDO_XORWOW) {
        if (!xw_jump_ready) xw_make_jump();
        g->xw = malloc(2 * n * sizeof *g->xw); /* the subsequences' starts, then their current states */
        if (!g->xw) return CURAND_STATUS_ALLOCATION_FAILED;
        xw_seed(g->seed, g->xw[0]);
        for (unsigned k = 1; k < n; k++) {
            gf_apply(xw_jump, g->xw[k - 1], g->xw[k]);
            g->xw[k][5] = g->xw[0][5]; /* 362437 * 2^67 is 0 mod 2^32: d is unchanged */
        }
        memcpy(g->xw + n, g->xw, n * sizeof *g->xw);
    } else {
        if (!mrg_jump_ready) mrg_make_jump();
        g->mrg = malloc(2 * n * sizeof *g->mrg);
        if (!g->mrg) return CURAND_STATUS_ALLOCATION_FAILED;
        mrg_seed(g->seed, g->mrg[0]);
        for (unsigned k = 1; k < n; k++) {
            memcpy(g->mrg[k], g->mrg[k - 1], sizeof g->mrg[k]);
            mat3_vec(J1, g->mrg[k], M1);
            mat3_vec(J2, g->mrg[k] + 3, M2);
        }
        memcpy(g->mrg + n, g->mrg, n * sizeof *g->mrg);
    }
    g->ready = 1;
    return CURAND_STATUS_SUCCESS;
}

static void reset(curandGenerator_t g)
{
    free(g->xw); free(g->mrg); free(g->pos);
    g->xw = NULL; g->mrg = NULL; g->pos = NULL;
    g->ready = 0;
}

/* Draw `step` (0-based) of subsequence `k`: XORWOW's 32 bits or MRG32k3a's (0, m1] value. */
static uint64_t draw_of(curandGenerator_t g, unsigned k, uint64_t step)
{
    unsigned n = threads(g);
    if (g->pos[k] > step) { /* back to the subsequence's start */
        if (g->type == CURAND_RNG_PSEUDO_XORWOW) memcpy(g->xw[n + k], g->xw[k], sizeof g->xw[k]);
        else memcpy(g->mrg[n + k], g->mrg[k], sizeof g->mrg[k]);
        g->pos[k] = 0;
    }
    uint64_t v = 0;
    for (; g->pos[k] <= step; g->pos[k]++)
        v = g->type == CURAND_RNG_PSEUDO_XORWOW ? xw_next(g->xw[n + k]) : mrg_raw(g->mrg[n + k]);
    return v;
}

/* The raw value at output position `at`: 32 bits (XORWOW, Philox) or MRG32k3a's (0, m1] value. */
static uint64_t draw(curandGenerator_t g, uint64_t at)
{
    if (g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10) {
        uint64_t block = at / 4, sub = block % PHILOX_THREADS, ctr_lo = block / PHILOX_THREADS;
        uint32_t ctr[4] = {(uint32_t)ctr_lo, (uint32_t)(ctr_lo >> 32), (uint32_t)sub, (uint32_t)(sub >> 32)}, out[4];
        philox(ctr, (uint32_t)g->seed, (uint32_t)(g->seed >> 32), out);
        return out[at % 4];
    }
    return draw_of(g, (unsigned)(at % threads(g)), at / threads(g));
}

/* The two raw values of normal pair `pair` of a call starting at the generator's offset. */
static void pair_draws(curandGenerator_t g, uint64_t pair, uint64_t *r0, uint64_t *r1)
{
    if (g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10) {
        *r0 = draw(g, g->offset + 2 * pair);
        *r1 = draw(g, g->offset + 2 * pair + 1);
        return;
    }
    /* thread t = pair mod THREADS makes pairs t, t + THREADS, ...: it skips to the draw of
       position offset + t, then takes two draws per pair */
    uint64_t n = threads(g), t = pair % n, q = g->offset + t, step = q / n + 2 * (pair / n);
    *r0 = draw_of(g, (unsigned)(q % n), step);
    *r1 = draw_of(g, (unsigned)(q % n), step + 1);
}

static double unit_float(curandGenerator_t g, uint64_t raw)
{
    if (g->type == CURAND_RNG_PSEUDO_MRG32K3A)
        return (float)(raw * 2.3283065498378288e-10);
    return (float)raw * 2.3283064e-10f + 2.3283064e-10f / 2.0f;
}

/* ------------------------------------------------------------------ the API */

EXPORT curandStatus_t curandGetVersion(int *version)
{
    if (!version) return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

static curandStatus_t create(curandGenerator_t *out, curandRngType_t type, int host)
{
    if (!out) return CURAND_STATUS_OUT_OF_RANGE;
    if (type == CURAND_RNG_PSEUDO_DEFAULT) type = CURAND_RNG_PSEUDO_XORWOW;
    if (type != CURAND_RNG_PSEUDO_XORWOW && type != CURAND_RNG_PSEUDO_MRG32K3A
        && type != CURAND_RNG_PSEUDO_PHILOX4_32_10)
        return CURAND_STATUS_TYPE_ERROR; /* MTGP32, MT19937, Sobol: not in tlpsim's stand-in */
    curandGenerator_t g = calloc(1, sizeof *g);
    if (!g) return CURAND_STATUS_ALLOCATION_FAILED;
    g->type = type;
    g->host = host;
    g->seed = 0; /* cuRAND's default seed */
    *out = g;
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandCreateGenerator(curandGenerator_t *g, curandRngType_t t) { return create(g, t, 0); }
EXPORT curandStatus_t curandCreateGeneratorHost(curandGenerator_t *g, curandRngType_t t) { return create(g, t, 1); }

EXPORT curandStatus_t curandDestroyGenerator(curandGenerator_t g)
{
    if (!g) return CURAND_STATUS_NOT_INITIALIZED;
    reset(g);
    free(g);
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g, unsigned long long seed)
{
    if (!g) return CURAND_STATUS_NOT_INITIALIZED;
    g->seed = seed; /* the offset stays: NVIDIA's library keeps it across re-seeding (the H200 does) */
    reset(g);
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetGeneratorOffset(curandGenerator_t g, unsigned long long offset)
{
    if (!g) return CURAND_STATUS_NOT_INITIALIZED;
    g->offset = offset;
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, curandOrdering_t order)
{
    if (!g) return CURAND_STATUS_NOT_INITIALIZED;
    if (order == CURAND_ORDERING_PSEUDO_BEST || order == CURAND_ORDERING_PSEUDO_DEFAULT
        || order == CURAND_ORDERING_PSEUDO_LEGACY)
        return CURAND_STATUS_SUCCESS; /* one ordering (see the top of this file) */
    return CURAND_STATUS_OUT_OF_RANGE;
}

EXPORT curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t stream)
{
    if (!g) return CURAND_STATUS_NOT_INITIALIZED;
    g->stream = stream;
    return CURAND_STATUS_SUCCESS;
}

/* Fill `out` (num elements of `size` bytes) through `fill`, in place for host generators,
   else through a host buffer and cudaMemcpy into device memory. */
static curandStatus_t deliver(curandGenerator_t g, void *out, size_t num, size_t size,
                              void (*fill)(curandGenerator_t, void *, size_t, const void *), const void *arg)
{
    if (!g) return CURAND_STATUS_NOT_INITIALIZED;
    if (!out && num) return CURAND_STATUS_OUT_OF_RANGE;
    curandStatus_t st = prepare(g);
    if (st != CURAND_STATUS_SUCCESS) return st;
    if (g->host) {
        fill(g, out, num, arg);
    } else {
        void *buf = malloc(num * size + 1);
        if (!buf) return CURAND_STATUS_ALLOCATION_FAILED;
        fill(g, buf, num, arg);
        cudaError_t err = g->stream ? cudaMemcpyAsync(out, buf, num * size, cudaMemcpyHostToDevice, g->stream)
                                    : cudaMemcpy(out, buf, num * size, cudaMemcpyHostToDevice);
        free(buf);
        if (err != cudaSuccess) return CURAND_STATUS_LAUNCH_FAILURE;
    }
    g->offset += num;
    return CURAND_STATUS_SUCCESS;
}

static void fill_bits(curandGenerator_t g, void *out, size_t n, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = draw(g, g->offset + i);
        ((uint32_t *)out)[i] = g->type == CURAND_RNG_PSEUDO_MRG32K3A ? (uint32_t)(r * 1.000000048662) : (uint32_t)r;
    }
}

static void fill_uniform(curandGenerator_t g, void *out, size_t n, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < n; i++) ((float *)out)[i] = (float)unit_float(g, draw(g, g->offset + i));
}

static void fill_uniform_double(curandGenerator_t g, void *out, size_t n, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = draw(g, g->offset + i);
        ((double *)out)[i] = g->type == CURAND_RNG_PSEUDO_MRG32K3A ? r * 2.3283065498378288e-10
                                                                  : r * 2.3283064365386963e-10 + 1.1641532182693481e-10;
    }
}

struct moments { double mean, stddev; int dbl, lognormal; };

static void fill_normal(curandGenerator_t g, void *out, size_t n, const void *arg)
{
    const struct moments *m = arg;
    for (size_t i = 0; i < n; i += 2) {
        uint64_t r0, r1;
        pair_draws(g, i / 2, &r0, &r1);
        double s = sqrt(-2.0 * log(unit_float(g, r0)));
        float a = g->type == CURAND_RNG_PSEUDO_MRG32K3A
                      ? (float)unit_float(g, r1) * 6.2831855f /* as curand_box_muller_mrg */
                      : (float)r1 * (2.3283064e-10f * 6.2831855f) + (2.3283064e-10f * 6.2831855f) / 2;
        double z[2] = {sin(a) * s, cos(a) * s};
        for (int k = 0; k < 2 && i + k < n; k++) {
            double x = m->mean + m->stddev * z[k];
            if (m->lognormal) x = exp(x);
            if (m->dbl) ((double *)out)[i + k] = x;
            else ((float *)out)[i + k] = (float)x;
        }
    }
}

EXPORT curandStatus_t curandGenerate(curandGenerator_t g, unsigned int *out, size_t num)
{
    return deliver(g, out, num, 4, fill_bits, NULL);
}
EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float *out, size_t num)
{
    return deliver(g, out, num, 4, fill_uniform, NULL);
}
EXPORT curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double *out, size_t num)
{
    return deliver(g, out, num, 8, fill_uniform_double, NULL);
}

static curandStatus_t normal(curandGenerator_t g, void *out, size_t num, double mean, double stddev, int dbl,
                             int lognormal)
{
    if (num % 2) return CURAND_STATUS_LENGTH_NOT_MULTIPLE; /* cuRAND makes normals in pairs */
    struct moments m = {mean, stddev, dbl, lognormal};
    return deliver(g, out, num, dbl ? 8 : 4, fill_normal, &m);
}
EXPORT curandStatus_t curandGenerateNormal(curandGenerator_t g, float *out, size_t n, float mean, float stddev)
{
    return normal(g, out, n, mean, stddev, 0, 0);
}
EXPORT curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double *out, size_t n, double mean, double sd)
{
    return normal(g, out, n, mean, sd, 1, 0);
}
EXPORT curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float *out, size_t n, float mean, float stddev)
{
    return normal(g, out, n, mean, stddev, 0, 1);
}
EXPORT curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t g, double *out, size_t n, double mean,
                                                    double sd)
{
    return normal(g, out, n, mean, sd, 1, 1);
}
