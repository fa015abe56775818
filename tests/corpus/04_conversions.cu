// 04_conversions.cu
// Exercises: cvt between float/double/int/uint/long long with explicit
// rounding: __float2int_rz/rn/ru/rd, __float2uint_rn, __int2float_rd,
// __uint2float_ru, __double2float_ru, __double2int_rz, __ll2float_rn,
// implicit (double)f, (long long)f, (float)ll, truncating int casts,
// reinterpret casts __float_as_int/__int_as_float/__double_as_longlong,
// __double2hiint/__double2loint, sign/zero extension.

__global__ void conversions(const float *f, const double *d, const int *iv,
                            int *oi, float *of, double *od, long long *oll, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[i];
    double y = d[i];
    int k = iv[i];
    int ri = __float2int_rz(x) + __float2int_rn(x) + __float2int_ru(x)
           + __float2int_rd(x) + (int)__float2uint_rn(fabsf(x))
           + __double2int_rz(y) + (int)x + __float_as_int(x)
           + __double2hiint(y) ^ __double2loint(y);
    oi[i] = ri;
    float rf = __int2float_rd(k) + __uint2float_ru((unsigned)k)
             + __double2float_ru(y) + __double2float_rz(y) + (float)y
             + __ll2float_rn((long long)k * 3) + __int_as_float(k & 0x3f800000)
             + (float)(unsigned)k;
    of[i] = rf;
    double rd = (double)x + (double)k + (double)(unsigned)k + (double)(long long)y
              + __longlong_as_double(__double_as_longlong(y) & ~1ll)
              + __int2double_rn(k) + __uint2double_rn((unsigned)k);
    od[i] = rd;
    long long ll = (long long)x + (long long)y + (unsigned long long)fabs(y)
                 + __float2ll_rd(x) + __double2ll_rn(y)
                 + (long long)(short)k + (long long)(unsigned char)k
                 + (long long)(signed char)k + (long long)(unsigned)k;
    oll[i] = ll;
}
