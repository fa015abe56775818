// A small ray caster: one thread per pixel shoots a primary ray from a
// pinhole camera, finds the nearest of a few spheres and planes (scene in
// constant memory) and shades the hit: ambient + Lambert + Blinn-Phong
// highlight for each point light, with a shadow ray per light tested against
// the spheres (early exit), a checkerboard on the floor, a sky gradient for
// misses, and one mirror bounce off reflective spheres.  What each pixel does
// depends on what it sees (sky, floor, matte or mirror sphere, lit side or
// not, shadowed or not): divergent.  Every ray-sphere test takes a sqrt, and
// normals, light directions and highlights use rsqrt and lg2/ex2.

#define RC_MAX_SPHERES 16
#define RC_MAX_PLANES 4
#define RC_MAX_LIGHTS 4
#define RC_MAX_BOUNCES 1          // mirror reflections after the primary hit
#define RC_EPS 1e-3f
#define RC_TMAX 100.0f
#define RC_AMBIENT 0.1f
#define RC_SPECULAR 0.6f

// sphere s: [3s] = (centre, radius), [3s+1] = (colour, shininess), [3s+2].x = reflectivity
__constant__ float4 c_spheres[3 * RC_MAX_SPHERES];
// plane p: [2p] = (unit normal, offset d: n.x + d = 0), [2p+1] = (colour, checker flag)
__constant__ float4 c_planes[2 * RC_MAX_PLANES];
// light l: (position, intensity)
__constant__ float4 c_lights[RC_MAX_LIGHTS];

struct V3 { float x, y, z; };
__device__ __forceinline__ V3 v3(float x, float y, float z) { V3 r = {x, y, z}; return r; }
__device__ __forceinline__ V3 sub(V3 a, V3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ __forceinline__ V3 add(V3 a, V3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ V3 scale(V3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
__device__ __forceinline__ float dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ V3 normalize(V3 a) { return scale(a, rsqrtf(dot(a, a))); }

// Distance along the unit ray (o, d) to the sphere's first surface crossing beyond
// RC_EPS, or -1.  The discriminant is r^2 - |f|^2 with f the centre-to-closest-
// approach vector, which keeps its precision for distant spheres.
__device__ __forceinline__ float hit_sphere(V3 o, V3 d, float4 s) {
    V3 oc = sub(o, v3(s.x, s.y, s.z));
    float b = dot(oc, d);
    V3 f = sub(oc, scale(d, b));
    float disc = s.w * s.w - dot(f, f);
    float sq = sqrtf(fmaxf(disc, 0.0f));
    float t = -b - sq;
    if (t < RC_EPS) t = -b + sq;
    return (disc > 0.0f && t > RC_EPS) ? t : -1.0f;
}

// Local illumination at p (normal n) seen along d
__device__ V3 shade(V3 p, V3 n, V3 d, V3 base, float shininess, int nspheres, int nlights) {
    V3 c = scale(base, RC_AMBIENT);
    V3 origin = add(p, scale(n, RC_EPS));
    for (int li = 0; li < nlights; ++li) {
        float4 light = c_lights[li];
        V3 to_light = sub(v3(light.x, light.y, light.z), p);
        float dist2 = dot(to_light, to_light);
        float inv_dist = rsqrtf(dist2);
        V3 l = scale(to_light, inv_dist);
        float diffuse = dot(n, l);
        if (diffuse <= 0.0f) continue;              // facing away from this light
        float dist = dist2 * inv_dist;
        bool blocked = false;
        for (int s = 0; s < nspheres && !blocked; ++s) {
            float t = hit_sphere(origin, l, c_spheres[3 * s]);
            blocked = t > 0.0f && t < dist;
        }
        if (blocked) continue;
        float highlight = 0.0f;
        if (shininess > 0.0f) {
            float nh = dot(n, normalize(sub(l, d)));
            if (nh > 0.0f) highlight = RC_SPECULAR * __powf(nh, shininess);
        }
        c = add(c, scale(add(scale(base, diffuse), v3(highlight, highlight, highlight)), light.w));
    }
    return c;
}

extern "C" __global__ void raycast(float* __restrict__ image, int width, int height, int nspheres, int nplanes,
                                   int nlights, float eye_x, float eye_y, float eye_z, float tan_half_fov) {
    const int px = blockIdx.x * blockDim.x + threadIdx.x;
    const int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height) return;
    const float aspect = (float)width / (float)height;
    V3 o = v3(eye_x, eye_y, eye_z);
    V3 d = normalize(v3((2.0f * (px + 0.5f) / width - 1.0f) * aspect * tan_half_fov,
                        (1.0f - 2.0f * (py + 0.5f) / height) * tan_half_fov, -1.0f));
    V3 colour = v3(0.0f, 0.0f, 0.0f);
    float weight = 1.0f;

    for (int bounce = 0;; ++bounce) {
        // nearest hit: kind 0 = nothing, 1 = sphere, 2 = plane
        float t_best = RC_TMAX;
        int kind = 0, which = 0;
        for (int s = 0; s < nspheres; ++s) {
            float t = hit_sphere(o, d, c_spheres[3 * s]);
            if (t > 0.0f && t < t_best) { t_best = t; kind = 1; which = s; }
        }
        for (int p = 0; p < nplanes; ++p) {
            float4 pl = c_planes[2 * p];
            float denom = pl.x * d.x + pl.y * d.y + pl.z * d.z;
            if (fabsf(denom) > 1e-6f) {
                float t = -(pl.x * o.x + pl.y * o.y + pl.z * o.z + pl.w) / denom;
                if (t > RC_EPS && t < t_best) { t_best = t; kind = 2; which = p; }
            }
        }
        if (kind == 0) {
            float k = 0.5f + 0.5f * d.y;   // sky gradient
            colour = add(colour, scale(v3(0.55f + 0.35f * k, 0.65f + 0.25f * k, 0.9f + 0.1f * k), weight));
            break;
        }
        V3 p = add(o, scale(d, t_best));
        V3 n, base;
        float shininess, reflect = 0.0f;
        if (kind == 1) {
            float4 s = c_spheres[3 * which], m = c_spheres[3 * which + 1];
            n = normalize(sub(p, v3(s.x, s.y, s.z)));
            base = v3(m.x, m.y, m.z);
            shininess = m.w;
            reflect = c_spheres[3 * which + 2].x;
        } else {
            float4 pl = c_planes[2 * which], m = c_planes[2 * which + 1];
            n = v3(pl.x, pl.y, pl.z);
            base = v3(m.x, m.y, m.z);
            shininess = 0.0f;
            if (m.w != 0.0f && ((int)floorf(p.x) + (int)floorf(p.z)) & 1) base = scale(base, 0.3f);
        }
        if (bounce == RC_MAX_BOUNCES) reflect = 0.0f;
        V3 local = shade(p, n, d, base, shininess, nspheres, nlights);
        colour = add(colour, scale(local, weight * (1.0f - reflect)));
        if (reflect <= 0.0f) break;
        // mirror bounce
        weight *= reflect;
        d = sub(d, scale(n, 2.0f * dot(d, n)));
        o = add(p, scale(n, RC_EPS));
    }
    float* out = image + 3 * ((size_t)py * width + px);
    out[0] = colour.x;
    out[1] = colour.y;
    out[2] = colour.z;
}
