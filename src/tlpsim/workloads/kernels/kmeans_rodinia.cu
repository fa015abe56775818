// k-means assignment as Rodinia's kmeans runs it (kmeansPoint in kmeans_cuda_kernel.cu;
// stands in for KMN in Lee et al., HPCA 2014, Table 2).
//
// One thread per point. The features are feature-major (feature f of point p at
// f * npoints + p), so a warp's read of one feature is one coalesced 128 B line; the
// centroids are in constant memory. The loops run over clusters, then features, and
// re-read the point's features from global memory for every cluster (Rodinia reads
// them through tex1Dfetch; here they go through the L1 data cache), keeping the
// kernel at about 20 registers. A warp's features are 34 lines, a 256-thread CTA's
// 34 KiB: reuse across the cluster loop survives in a 16 KiB L1 only while few warps
// share it, which is what makes this kernel lose performance as CTAs per SM rise.

#define MAXK 16          // capacity of the constant-memory centroid table
#define MAXF 64          // features per point at most

__constant__ float c_clusters[MAXK * MAXF];

extern "C" __global__ void kmeans_point(const float* features, int nfeatures, int npoints, int nclusters,
                                        int* __restrict__ membership)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= npoints) return;
    int index = -1;
    float min_dist = 3.402823466e38f;
#pragma unroll 1
    for (int c = 0; c < nclusters; ++c) {
        const float* centre = &c_clusters[c * nfeatures];
        float dist = 0.0f;
#pragma unroll 1
        for (int f = 0; f < nfeatures; ++f) {
            float diff = features[f * npoints + p] - centre[f];
            dist += diff * diff;
        }
        if (dist < min_dist) {   // strict: ties go to the lowest cluster index
            min_dist = dist;
            index = c;
        }
    }
    membership[p] = index;
}
