// 2D convolution of an image with a (2R+1)^2 filter held in constant memory (every thread
// of a warp reads the same tap: the broadcast case constant caches serve well). Each CTA
// stages an input tile of (OUT_X + 2R) x (OUT_Y + 2R) floats -- its OUT_X x OUT_Y outputs
// plus the halo, zero outside the image -- into shared memory, then each thread computes
// (OUT_X/BX) x (OUT_Y/BY) outputs from shared memory. 70 x 54 floats = 14.8 KiB per CTA:
// three CTAs fill a Fermi SM's 48 KiB, so shared memory limits occupancy.

#define R 3
#define TAPS (2 * R + 1)
#define BX 32
#define BY 8
#define OUT_X 64
#define OUT_Y 48
#define IN_X (OUT_X + 2 * R)
#define IN_Y (OUT_Y + 2 * R)

extern "C" {

__constant__ float c_filter[TAPS * TAPS];

__global__ void conv2d(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[IN_Y][IN_X];
    const int x0 = blockIdx.x * OUT_X, y0 = blockIdx.y * OUT_Y;
    const int tid = threadIdx.y * BX + threadIdx.x;

    for (int k = tid; k < IN_X * IN_Y; k += BX * BY) {
        int ty = k / IN_X, tx = k - ty * IN_X;
        int gy = y0 + ty - R, gx = x0 + tx - R;
        tile[ty][tx] = (gy >= 0 && gy < rows && gx >= 0 && gx < cols) ? in[gy * cols + gx] : 0.0f;
    }
    __syncthreads();

    for (int oy = threadIdx.y; oy < OUT_Y; oy += BY) {
        int gy = y0 + oy;
        if (gy >= rows) break;
        for (int ox = threadIdx.x; ox < OUT_X; ox += BX) {
            int gx = x0 + ox;
            if (gx >= cols) break;
            float acc = 0.0f;
#pragma unroll
            for (int fy = 0; fy < TAPS; ++fy)
#pragma unroll
                for (int fx = 0; fx < TAPS; ++fx)
                    acc += c_filter[fy * TAPS + fx] * tile[oy + fy][ox + fx];
            out[gy * cols + gx] = acc;
        }
    }
}

}
