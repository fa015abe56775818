// Back-propagation training step of a 2-layer perceptron (stands in for Rodinia
// backprop).  The input layer is wide (n_in units, unit 0 is the constant bias
// input), the hidden layer has HID = 16 units.
//
//   bp_layer_forward   grid (1, n_in / TILE), block (HID, TILE): each CTA takes a
//                      TILE-long slice of the input, multiplies it by the matching
//                      TILE x HID slice of the weight matrix in shared memory and
//                      reduces over the input dimension with a shared-memory tree
//                      (log2(TILE) barrier-separated steps); one partial sum per
//                      (CTA, hidden unit) goes to global memory.
//   bp_adjust_weights  same grid: every thread applies the momentum update to one
//                      input->hidden weight, given the hidden-layer deltas.
// The small hidden->output layer and the deltas are computed by the host between
// the two launches, as the original application does.

#define HID 16
#define TILE 16

extern "C" __global__ void bp_layer_forward(const float* __restrict__ input, const float* __restrict__ w,
                                            float* __restrict__ partial) {
    __shared__ float s_in[TILE];
    __shared__ float s_prod[TILE][HID];
    int tx = threadIdx.x;                  // hidden unit
    int ty = threadIdx.y;                  // input unit within the slice
    int row = blockIdx.y * TILE + ty;      // input unit

    if (tx == 0) s_in[ty] = input[row];
    __syncthreads();
    s_prod[ty][tx] = w[row * HID + tx] * s_in[ty];
    __syncthreads();
    for (int stride = TILE / 2; stride > 0; stride >>= 1) {
        if (ty < stride) s_prod[ty][tx] += s_prod[ty + stride][tx];
        __syncthreads();
    }
    if (ty == 0) partial[blockIdx.y * HID + tx] = s_prod[0][tx];
}

extern "C" __global__ void bp_adjust_weights(const float* __restrict__ delta, const float* __restrict__ input,
                                             float* __restrict__ w, float* __restrict__ oldw,
                                             float eta, float momentum) {
    __shared__ float s_delta[HID];
    __shared__ float s_in[TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    if (ty == 0) s_delta[tx] = delta[tx];
    if (tx == 0) s_in[ty] = input[row];
    __syncthreads();
    int idx = row * HID + tx;
    float dw = eta * s_delta[tx] * s_in[ty] + momentum * oldw[idx];
    w[idx] += dw;
    oldw[idx] = dw;
}
