// A small ray caster: one thread per pixel shoots a primary ray from a
// pinhole camera, finds the nearest of a few spheres and planes (scene in
// constant memory), and shades the hit with one point light: ambient +
// Lambert + Blinn-Phong highlight, a checkerboard on the floor, and a shadow
// ray tested against the spheres (with early exit).  Misses get a sky
// gradient.  Control flow depends on what each pixel sees: divergent; sqrt,
// rsqrt, reciprocal, log2/exp2 (powf) keep the SFUs busy.

#define RC_MAX_SPHERES 16
#define RC_MAX_PLANES 4
#define RC_EPS 1e-3f
#define RC_TMAX 100.0f
#define RC_AMBIENT 0.1f
#define RC_SPECULAR 0.6f

// sphere s: c_spheres[2s] = (center, radius), c_spheres[2s+1] = (colour, shininess)
__constant__ float4 c_spheres[2 * RC_MAX_SPHERES];
// plane p: c_planes[2p] = (unit normal, offset d: n.x + d = 0), c_planes[2p+1] = (colour, checker flag)
__constant__ float4 c_planes[2 * RC_MAX_PLANES];

struct V3 { float x, y, z; };
__device__ __forceinline__ V3 v3(float x, float y, float z) { V3 r = {x, y, z}; return r; }
__device__ __forceinline__ V3 sub(V3 a, V3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ __forceinline__ V3 add(V3 a, V3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ __forceinline__ V3 scale(V3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
__device__ __forceinline__ float dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __forceinline__ V3 normalize(V3 a) { return scale(a, rsqrtf(dot(a, a))); }

// distance along the ray to the sphere's first surface crossing beyond RC_EPS, or -1
__device__ __forceinline__ float hit_sphere(V3 o, V3 d, float4 s) {
    V3 oc = sub(o, v3(s.x, s.y, s.z));
    float b = dot(oc, d);
    float c = dot(oc, oc) - s.w * s.w;
    float disc = b * b - c;
    if (disc <= 0.0f) return -1.0f;
    float sq = sqrtf(disc);
    float t = -b - sq;
    if (t < RC_EPS) t = -b + sq;
    return t > RC_EPS ? t : -1.0f;
}

extern "C" __global__ void raycast(float* __restrict__ image, int width, int height, int nspheres, int nplanes,
                                   float eye_x, float eye_y, float eye_z, float tan_half_fov,
                                   float light_x, float light_y, float light_z) {
    const int px = blockIdx.x * blockDim.x + threadIdx.x;
    const int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height) return;
    const float aspect = (float)width / (float)height;
    const V3 eye = v3(eye_x, eye_y, eye_z);
    const V3 dir = normalize(v3((2.0f * (px + 0.5f) / width - 1.0f) * aspect * tan_half_fov,
                                (1.0f - 2.0f * (py + 0.5f) / height) * tan_half_fov, -1.0f));

    // nearest hit: kind 0 = nothing, 1 = sphere, 2 = plane
    float t_best = RC_TMAX;
    int kind = 0, which = 0;
    for (int s = 0; s < nspheres; ++s) {
        float t = hit_sphere(eye, dir, c_spheres[2 * s]);
        if (t > 0.0f && t < t_best) { t_best = t; kind = 1; which = s; }
    }
    for (int p = 0; p < nplanes; ++p) {
        float4 pl = c_planes[2 * p];
        float denom = pl.x * dir.x + pl.y * dir.y + pl.z * dir.z;
        if (fabsf(denom) > 1e-6f) {
            float t = -(pl.x * eye.x + pl.y * eye.y + pl.z * eye.z + pl.w) / denom;
            if (t > RC_EPS && t < t_best) { t_best = t; kind = 2; which = p; }
        }
    }

    V3 colour;
    if (kind == 0) {
        float k = 0.5f + 0.5f * dir.y;   // sky gradient
        colour = v3(0.55f + 0.35f * k, 0.65f + 0.25f * k, 0.9f + 0.1f * k);
    } else {
        V3 p = add(eye, scale(dir, t_best));
        V3 n, base;
        float shininess;
        if (kind == 1) {
            float4 s = c_spheres[2 * which], m = c_spheres[2 * which + 1];
            n = scale(sub(p, v3(s.x, s.y, s.z)), 1.0f / s.w);
            base = v3(m.x, m.y, m.z);
            shininess = m.w;
        } else {
            float4 pl = c_planes[2 * which], m = c_planes[2 * which + 1];
            n = v3(pl.x, pl.y, pl.z);
            base = v3(m.x, m.y, m.z);
            shininess = 0.0f;
            if (m.w != 0.0f && ((int)floorf(p.x) + (int)floorf(p.z)) & 1) base = scale(base, 0.3f);
        }
        V3 to_light = sub(v3(light_x, light_y, light_z), p);
        float dist2 = dot(to_light, to_light);
        float inv_dist = rsqrtf(dist2);
        V3 l = scale(to_light, inv_dist);
        float diffuse = dot(n, l);
        float lit = RC_AMBIENT;
        float highlight = 0.0f;
        if (diffuse > 0.0f) {
            // shadow ray towards the light, against the spheres only
            V3 origin = add(p, scale(n, RC_EPS));
            float dist = dist2 * inv_dist;
            bool blocked = false;
            for (int s = 0; s < nspheres && !blocked; ++s) {
                float t = hit_sphere(origin, l, c_spheres[2 * s]);
                blocked = t > 0.0f && t < dist;
            }
            if (!blocked) {
                lit += diffuse;
                if (shininess > 0.0f) {
                    float nh = dot(n, normalize(sub(l, dir)));
                    if (nh > 0.0f) highlight = RC_SPECULAR * __powf(nh, shininess);
                }
            }
        }
        colour = add(scale(base, lit), v3(highlight, highlight, highlight));
    }
    float* out = image + 3 * ((size_t)py * width + px);
    out[0] = colour.x;
    out[1] = colour.y;
    out[2] = colour.z;
}
