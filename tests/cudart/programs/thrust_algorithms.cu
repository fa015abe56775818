// thrust (CCCL, as shipped with the toolchain) on the device: sort, sort_by_key,
// reduce, inclusive and exclusive scan and transform, each checked against a
// plain CPU loop; the program prints the checks and a few values that
// tests/cudart/test_thrust.py compares with NumPy.
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdio>
#include <vector>

struct saxpy {
    float a;
    __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

int main()
{
    const int n = 3000;
    std::vector<unsigned> keys(n);
    std::vector<int> vals(n);
    for (int i = 0; i < n; i++) {
        keys[i] = (unsigned)((i * 2654435761u) % 100003u);
        vals[i] = i;
    }
    int failures = 0;

    // sort (radix sort of unsigned keys)
    thrust::device_vector<unsigned> d_keys(keys.begin(), keys.end());
    thrust::sort(d_keys.begin(), d_keys.end());
    thrust::host_vector<unsigned> sorted = d_keys;
    std::vector<unsigned> want = keys;
    std::sort(want.begin(), want.end());
    bool ok = std::equal(want.begin(), want.end(), sorted.begin());
    failures += !ok;
    printf("sort: %s first %u last %u\n", ok ? "ok" : "WRONG", sorted[0], sorted[n - 1]);

    // sort_by_key, descending (the values follow their keys)
    thrust::device_vector<unsigned> d_k2(keys.begin(), keys.end());
    thrust::device_vector<int> d_v(vals.begin(), vals.end());
    thrust::sort_by_key(d_k2.begin(), d_k2.end(), d_v.begin(), thrust::greater<unsigned>());
    thrust::host_vector<unsigned> k2 = d_k2;
    thrust::host_vector<int> v2 = d_v;
    ok = true;
    for (int i = 0; i < n; i++) ok &= keys[v2[i]] == k2[i] && (i == 0 || k2[i - 1] >= k2[i]);
    failures += !ok;
    printf("sort_by_key: %s first value %d\n", ok ? "ok" : "WRONG", v2[0]);

    // reduce: sum and maximum
    unsigned long long sum = thrust::reduce(d_keys.begin(), d_keys.end(), 0ull);
    unsigned mx = thrust::reduce(d_keys.begin(), d_keys.end(), 0u, thrust::maximum<unsigned>());
    unsigned long long cpu_sum = 0;
    for (unsigned k : keys) cpu_sum += k;
    ok = sum == cpu_sum && mx == want[n - 1];
    failures += !ok;
    printf("reduce: %s sum %llu max %u\n", ok ? "ok" : "WRONG", sum, mx);

    // inclusive and exclusive scan of ints
    thrust::device_vector<int> d_in(n);
    for (int i = 0; i < n; i++) d_in[i] = (i % 7) - 3;
    thrust::device_vector<int> d_inc(n), d_exc(n);
    thrust::inclusive_scan(d_in.begin(), d_in.end(), d_inc.begin());
    thrust::exclusive_scan(d_in.begin(), d_in.end(), d_exc.begin(), 10);
    thrust::host_vector<int> inc = d_inc, exc = d_exc;
    ok = true;
    int run = 0;
    for (int i = 0; i < n; i++) {
        ok &= exc[i] == run + 10;
        run += (i % 7) - 3;
        ok &= inc[i] == run;
    }
    failures += !ok;
    printf("scan: %s inclusive last %d exclusive last %d\n", ok ? "ok" : "WRONG", inc[n - 1], exc[n - 1]);

    // transform: saxpy with a functor, and negate
    thrust::device_vector<float> x(n), y(n), z(n);
    for (int i = 0; i < n; i++) {
        x[i] = 0.5f * i;
        y[i] = 1.0f - i;
    }
    thrust::transform(x.begin(), x.end(), y.begin(), z.begin(), saxpy{3.0f});
    thrust::transform(z.begin(), z.end(), z.begin(), thrust::negate<float>());
    thrust::host_vector<float> hz = z;
    ok = true;
    for (int i = 0; i < n; i++) ok &= hz[i] == -(3.0f * (0.5f * i) + (1.0f - i));
    failures += !ok;
    printf("transform: %s z[%d] = %g\n", ok ? "ok" : "WRONG", n - 1, hz[n - 1]);

    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
