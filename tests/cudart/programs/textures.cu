// Texture objects over CUDA arrays, pitched memory and linear memory: tex1Dfetch,
// tex1D and tex2D with point and linear filtering, unnormalized and normalized
// coordinates, the four address modes and both read modes. The program prints
// every fetched value (as hex floats); tests/cudart/test_textures.py compares
// them with a NumPy reference written from the CUDA Programming Guide's formulas.
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" // cudaMemcpyToArray: deprecated, still in CUDA 13

__global__ void sample2d(cudaTextureObject_t t, const float *x, const float *y, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, x[i], y[i]);
}

__global__ void sample2d_scalar(cudaTextureObject_t t, const float *x, const float *y, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, x[i], y[i]);
}

__global__ void sample1d(cudaTextureObject_t t, const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x[i]);
}

__global__ void fetch1d(cudaTextureObject_t t, const int *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, x[i]);
}

__global__ void fetch1d_int(cudaTextureObject_t t, const int *x, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, x[i]);
}

static const int W = 5, H = 4, N = 16;

static cudaTextureObject_t make(const cudaResourceDesc &res, cudaTextureAddressMode mode, cudaTextureFilterMode filter,
                                bool normalized, cudaTextureReadMode read = cudaReadModeElementType,
                                float border = 0.0f)
{
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = mode;
    td.filterMode = filter;
    td.readMode = read;
    td.normalizedCoords = normalized;
    for (int c = 0; c < 4; c++) td.borderColor[c] = border;
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, &res, &td, NULL));
    return t;
}

int main()
{
    // coordinates: texel units, and the same divided by the size for normalized textures
    // (multiples of 1/64, so every product and weight is exact in float32)
    float xs[N], ys[N], us[N], vs[N];
    int is[N];
    for (int k = 0; k < N; k++) {
        xs[k] = -1.5f + 0.546875f * k;     // -1.5 .. 6.70
        ys[k] = 4.25f - 0.359375f * k;     // 4.25 .. -1.14
        us[k] = -0.75f + 0.171875f * k;    // -0.75 .. 1.83
        vs[k] = 1.5f - 0.140625f * k;      // 1.5 .. -0.61
        is[k] = k - 3;                     // -3 .. 12
    }
    float *dx, *dy, *du, *dv, *dout;
    int *di, *dout_i;
    float4 *dout4;
    CHECK(cudaMalloc(&dx, sizeof xs)); CHECK(cudaMalloc(&dy, sizeof ys));
    CHECK(cudaMalloc(&du, sizeof us)); CHECK(cudaMalloc(&dv, sizeof vs));
    CHECK(cudaMalloc(&di, sizeof is));
    CHECK(cudaMalloc(&dout, N * sizeof(float))); CHECK(cudaMalloc(&dout_i, N * sizeof(int)));
    CHECK(cudaMalloc(&dout4, N * sizeof(float4)));
    CHECK(cudaMemcpy(dx, xs, sizeof xs, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, ys, sizeof ys, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(du, us, sizeof us, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dv, vs, sizeof vs, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(di, is, sizeof is, cudaMemcpyHostToDevice));

    // a W x H float CUDA array: texel (c, r) = r * 10 + c * c + 0.25
    float img[H][W];
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) img[r][c] = r * 10.0f + c * c + 0.25f;
    cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &fdesc, W, H));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    float back[H][W];
    CHECK(cudaMemcpy2DFromArray(back, W * sizeof(float), arr, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    printf("roundtrip %s\n", memcmp(back, img, sizeof img) == 0 ? "ok" : "differs");
    cudaChannelFormatDesc got;
    cudaExtent ext;
    unsigned flags;
    CHECK(cudaArrayGetInfo(&got, &ext, &flags, arr));
    printf("array %d %d %d %d kind %d extent %zu %zu %zu\n", got.x, got.y, got.z, got.w, (int)got.f, ext.width,
           ext.height, ext.depth);

    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;

    struct { const char *name; cudaTextureAddressMode mode; cudaTextureFilterMode filter; bool norm; } cases[] = {
        {"point_clamp", cudaAddressModeClamp, cudaFilterModePoint, false},
        {"linear_clamp", cudaAddressModeClamp, cudaFilterModeLinear, false},
        {"linear_border", cudaAddressModeBorder, cudaFilterModeLinear, false},
        {"point_wrap_norm", cudaAddressModeWrap, cudaFilterModePoint, true},
        {"linear_wrap_norm", cudaAddressModeWrap, cudaFilterModeLinear, true},
        {"linear_mirror_norm", cudaAddressModeMirror, cudaFilterModeLinear, true},
        {"point_border_norm", cudaAddressModeBorder, cudaFilterModePoint, true},
    };
    float out[N];
    for (auto &c : cases) {
        cudaTextureObject_t t = make(res, c.mode, c.filter, c.norm, cudaReadModeElementType, -7.5f);
        sample2d_scalar<<<1, N>>>(t, c.norm ? du : dx, c.norm ? dv : dy, dout, N);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
        printf("%s", c.name);
        for (int k = 0; k < N; k++) printf(" %a", out[k]);
        printf("\n");
        CHECK(cudaDestroyTextureObject(t));
    }

    // a 3 x 2 uchar4 array read as normalized floats, bilinear
    unsigned char rgba[2][3][4];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++)
            for (int ch = 0; ch < 4; ch++) rgba[r][c][ch] = (unsigned char)(r * 100 + c * 60 + ch * 17);
    cudaChannelFormatDesc u4 = cudaCreateChannelDesc<uchar4>();
    cudaArray_t arr4;
    CHECK(cudaMallocArray(&arr4, &u4, 3, 2));
    CHECK(cudaMemcpyToArray(arr4, 0, 0, rgba, sizeof rgba, cudaMemcpyHostToDevice));
    res.res.array.array = arr4;
    cudaTextureObject_t t4 = make(res, cudaAddressModeClamp, cudaFilterModeLinear, false, cudaReadModeNormalizedFloat);
    sample2d<<<1, N>>>(t4, dx, dy, dout4, N);
    float4 out4[N];
    CHECK(cudaMemcpy(out4, dout4, sizeof out4, cudaMemcpyDeviceToHost));
    printf("uchar4_linear_normalized");
    for (int k = 0; k < N; k++) printf(" %a %a %a %a", out4[k].x, out4[k].y, out4[k].z, out4[k].w);
    printf("\n");
    CHECK(cudaDestroyTextureObject(t4));

    // a 1D array of 6 floats, tex1D with linear filtering and wrapped normalized coordinates
    float line[6] = {1.0f, 4.0f, -2.0f, 8.5f, 0.0f, 3.0f};
    cudaArray_t arr1;
    CHECK(cudaMallocArray(&arr1, &fdesc, 6));
    CHECK(cudaMemcpyToArray(arr1, 0, 0, line, sizeof line, cudaMemcpyHostToDevice));
    res.res.array.array = arr1;
    cudaTextureObject_t t1 = make(res, cudaAddressModeWrap, cudaFilterModeLinear, true);
    sample1d<<<1, N>>>(t1, du, dout, N);
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    printf("tex1D_linear_wrap_norm");
    for (int k = 0; k < N; k++) printf(" %a", out[k]);
    printf("\n");

    // linear memory: tex1Dfetch with integer indices, clamp and border
    float *lin;
    CHECK(cudaMalloc(&lin, 8 * sizeof(float)));
    float lv[8];
    for (int k = 0; k < 8; k++) lv[k] = 0.5f * k * k - 3.0f;
    CHECK(cudaMemcpy(lin, lv, sizeof lv, cudaMemcpyHostToDevice));
    cudaResourceDesc lres;
    memset(&lres, 0, sizeof lres);
    lres.resType = cudaResourceTypeLinear;
    lres.res.linear.devPtr = lin;
    lres.res.linear.desc = fdesc;
    lres.res.linear.sizeInBytes = sizeof lv;
    for (int m = 0; m < 2; m++) {
        cudaTextureObject_t tl = make(lres, m ? cudaAddressModeBorder : cudaAddressModeClamp, cudaFilterModePoint,
                                      false, cudaReadModeElementType, 2.5f);
        fetch1d<<<1, N>>>(tl, di, dout, N);
        CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
        printf("%s", m ? "fetch_border" : "fetch_clamp");
        for (int k = 0; k < N; k++) printf(" %a", out[k]);
        printf("\n");
        CHECK(cudaDestroyTextureObject(tl));
    }

    // pitched int memory: tex1Dfetch<int> on linear memory of ints
    int *ints;
    CHECK(cudaMalloc(&ints, 10 * sizeof(int)));
    int iv[10];
    for (int k = 0; k < 10; k++) iv[k] = -1000 + 333 * k;
    CHECK(cudaMemcpy(ints, iv, sizeof iv, cudaMemcpyHostToDevice));
    lres.res.linear.devPtr = ints;
    lres.res.linear.desc = cudaCreateChannelDesc<int>();
    lres.res.linear.sizeInBytes = sizeof iv;
    cudaTextureObject_t ti = make(lres, cudaAddressModeClamp, cudaFilterModePoint, false);
    fetch1d_int<<<1, N>>>(ti, di, dout_i, N);
    int outi[N];
    CHECK(cudaMemcpy(outi, dout_i, sizeof outi, cudaMemcpyDeviceToHost));
    printf("fetch_int");
    for (int k = 0; k < N; k++) printf(" %d", outi[k]);
    printf("\n");

    CHECK(cudaDestroyTextureObject(t1));
    CHECK(cudaDestroyTextureObject(ti));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFreeArray(arr4));
    CHECK(cudaFreeArray(arr1));
    CHECK(cudaFree(lin));
    CHECK(cudaFree(ints));
    printf("done\n");
    return 0;
}
