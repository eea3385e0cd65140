// Fifty-sixth session: how many thread-block clusters of 2, 4, 8 (and 16, non-portable) CTAs
// of one SM each (a stage-1 CTA's ~200 KB of shared memory) the device holds at once
// (cudaOccupancyMaxActiveClusters), and so how many such CTAs run in one wave.
//   nvcc -arch=sm_90a -o /tmp/cop cluster_occupancy_probe.cu && /tmp/cop
#include <cstdio>

#include <cuda_runtime.h>

__global__ void one_cta_per_sm() {
    extern __shared__ unsigned char smem[];
    smem[threadIdx.x] = 0;
}

int main() {
    const int smem = 200 * 1024;
    cudaFuncSetAttribute(one_cta_per_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(one_cta_per_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    for (int threads : {384, 640}) {
        for (int c : {1, 2, 3, 4, 6, 8, 16}) {
            cudaLaunchAttribute a[1] = {};
            a[0].id = cudaLaunchAttributeClusterDimension;
            a[0].val.clusterDim.x = c;
            a[0].val.clusterDim.y = 1;
            a[0].val.clusterDim.z = 1;
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(c * 64);
            cfg.blockDim = dim3(threads);
            cfg.dynamicSmemBytes = smem;
            cfg.attrs = a;
            cfg.numAttrs = 1;
            int clusters = -1;
            const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, one_cta_per_sm, &cfg);
            std::printf("%d SMs, %d threads, cluster %2d: %3d clusters = %3d CTAs at once (%s)\n",
                        sms, threads, c, clusters, clusters * c, cudaGetErrorString(e));
        }
    }
    return 0;
}
