#!/usr/bin/env python3
"""Write the contact scenes of scenes/ (pyramid20, dominoes, inclined_plane, cradle, tippe_top, wall252, funnel1000,
terrain).
Usage: tools/gen_contact_scenes.py [OUTDIR]   (default: scenes/ next to this script's parent)."""
import math, os, sys

def num(x):
    return repr(float(x)) if x != int(x) else str(int(x))

def vec(*v):
    return " ".join(num(x) for x in v)

def header(comment, world, run):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<!-- ' + comment + ' -->\n<ibdyn version="1">\n'
            f'  <world {world}/>\n  <run {run}/>\n')

def ground(half=50.0, mat='material="ground"'):
    return (f'  <body name="ground" type="static" position="0 0 -0.5">\n'
            f'    <box half_extents="{vec(half, half, 0.5)}" {mat}/>\n  </body>\n')

def box(name, pos, half, mass, extra="", rot=""):
    r = f' rotation_axis_angle="{rot}"' if rot else ""
    return (f'  <body name="{name}" type="dynamic" position="{vec(*pos)}"{r}>\n'
            f'    <box half_extents="{vec(*half)}" mass="{num(mass)}" {extra}/>\n  </body>\n')

def pyramid20():
    s = header("Pyramid of 20 rows (210 boxes, 1 m cubes, 1 kg) on a static ground, a 2D pyramid in the x-z plane. "
               "Row k (0 = bottom) has 20 - k boxes, 1.02 m apart, shifted by k * 0.51 m; the boxes start "
               "exactly touching (gap 0). bench/bench_contacts.c builds the same scene for ibdyn, Bullet and ODE.",
               'gravity="0 0 -9.81"', 'timestep="0.016666666666666666" duration="10"')
    s += '  <material name="box" static_friction="0.25" dynamic_friction="0.25"/>\n'
    s += '  <material name="ground" static_friction="0.25" dynamic_friction="0.25"/>\n'
    s += ground()
    for k in range(20):
        for i in range(20 - k):
            x = (i - (19 - k) / 2.0) * 1.02
            s += box(f"b{k}_{i}", (x, 0, 0.5 + k), (0.5, 0.5, 0.5), 1, 'material="box"')
    return s + "</ibdyn>\n"

def dominoes():
    n, gap = 20, 0.5
    s = header(f"{n} dominoes (0.1 x 0.5 x 1 m, 0.5 kg) 0.5 m apart on a ground; the first one is pushed "
               "(angular velocity 2 rad/s about y) and the row falls.",
               'gravity="0 0 -9.81"', 'timestep="0.002" duration="6"')
    s += '  <material name="wood" static_friction="0.3" dynamic_friction="0.25"/>\n'
    s += '  <material name="ground" static_friction="0.3" dynamic_friction="0.25"/>\n'
    s += ground()
    for i in range(n):
        body = (f'  <body name="d{i}" type="dynamic" position="{vec(i * gap, 0, 0.5)}"'
                + (' angular_velocity="0 2 0" linear_velocity="1 0 0"' if i == 0 else "") + '>\n'
                f'    <box half_extents="0.05 0.25 0.5" mass="0.5" material="wood"/>\n  </body>\n')
        s += body
    return s + "</ibdyn>\n"

def inclined_plane():
    th = math.radians(15.0)
    s = header("DIGEST 23.3 (Fig. 5.11, Table 5.2): ten 1 m cubes of 1 kg on a plane inclined by 15 degrees about y "
               "(downhill = +x). The plane has mu = 0, so under the sum rule the cubes' own coefficients act; "
               "here the cubes carry the final coefficients 0.535 ... 0.85 from the start (the thesis starts them "
               "frictionless and sets the coefficients at t = 5 s; tests/test_contact_incline.c does that). "
               "h = 1e-3, eps_c = 1e-3, eps_d = 1e-5.",
               'gravity="0 0 -9.81" contact_tolerance="0.001" contact_position_tolerance="1e-05"',
               'timestep="0.001" duration="11"')
    s += ('  <body name="plane" type="static" position="0 0 0" rotation_axis_angle="0 1 0 ' + num(th) + '">\n'
          '    <box half_extents="200 20 0.5" position="0 0 -0.5" static_friction="0" dynamic_friction="0"/>\n  </body>\n')
    n = (math.sin(th), 0.0, math.cos(th))  # plane normal after rotating z by th about y
    t = (math.cos(th), 0.0, -math.sin(th))  # downhill direction
    for i in range(10):
        mu = 0.535 + 0.035 * i
        u, w = -60.0, (i - 4.5) * 2.0  # along the slope, across (y)
        c = (u * t[0] + 0.5 * n[0], w, u * t[2] + 0.5 * n[2])
        s += (f'  <body name="cube{i + 1}" type="dynamic" position="{vec(*c)}" rotation_axis_angle="0 1 0 {num(th)}">\n'
              f'    <box half_extents="0.5 0.5 0.5" mass="1" static_friction="{num(round(mu, 3))}" '
              f'dynamic_friction="{num(round(mu, 3))}"/>\n  </body>\n')
    return s + "</ibdyn>\n"

def cradle():
    L, r = 3.0, 1.0
    gap = 0.0
    s = header("DIGEST 23.4 (Fig. 5.12): Newton's cradle, 5 balls (radius 1 m, 1 kg, e = 1) on hinges (axis y) "
               f"{num(L)} m below a static frame (rod length not given in the thesis: [R]); ball 0 is released from 45 "
               f"degrees. The balls hang {num(gap)} m apart (touching, as in the thesis). h = 1e-3, eps_d = 1e-6, eps_v = eps_v,c = 1e-6, eps_c = 1e-3.",
               'gravity="0 0 -9.81" contact_tolerance="0.001" position_tolerance="1e-06" velocity_tolerance="1e-06" '
               'collision_tolerance="1e-06"', 'timestep="0.001" duration="4"')
    top = L + r
    s += f'  <body name="frame" type="static" position="{vec(0, 0, top)}"/>\n'
    a = math.radians(45.0)
    for i in range(5):
        px = i * (2 * r + gap)
        if i == 0:
            c = (px - L * math.sin(a), 0, top - L * math.cos(a))
        else:
            c = (px, 0, top - L)
        s += (f'  <body name="ball{i}" type="dynamic" position="{vec(*c)}">\n'
              f'    <sphere radius="{num(r)}" mass="1" restitution="1" static_friction="0" dynamic_friction="0"/>\n  </body>\n')
    for i in range(5):
        px = i * (2 * r + gap)
        s += (f'  <joint type="hinge" name="hinge{i}" body_a="frame" body_b="ball{i}" anchor="{vec(px, 0, top)}" '
              'axis="0 1 0"/>\n')
    return s + "</ibdyn>\n"

def wall252(shock):
    rows, L, W, H = 24, 1.0, 0.4, 0.3
    mix = 'restitution_mixing="max" friction_mixing="max"'
    world = ('gravity="0 0 -9.81" collision_tolerance="0.001" contact_position_tolerance="1e-05" ' + mix
             + (' shock_iterations="10"' if shock else ''))
    s = header("DIGEST 23.2 (Fig. 5.10): a wall of 252 stones (1 m x 0.4 m x 0.3 m, 1 kg), 24 courses in running "
               "bond (11 and 10 stones alternately), hit by a pendulum ball (radius 1 m, 10 kg) on a 6 m ball joint, "
               "released from 60 degrees. e = 0.1, mu_s = 0.2, mu_d = 0.1 for all bodies (max mixing, so a pair has "
               "exactly these values), Newton's law; eps_v,c = 1e-3, eps_d = 1e-5, h = 0.005."
               + (" Shock propagation after 10 sweeps (the thesis' fast run)." if shock else
                  " Shock propagation off (wall252_shock.xml has it on)."),
               world, 'timestep="0.005" duration="5"')
    s += '  <material name="stone" restitution="0.1" static_friction="0.2" dynamic_friction="0.1"/>\n'
    s += ground(mat='material="stone"')
    gapx = 0.002
    for k in range(rows):
        n = 11 if k % 2 == 0 else 10
        for i in range(n):
            x = (i - (n - 1) / 2.0) * (L + gapx)
            s += box(f"s{k}_{i}", (x, 0, H / 2 + k * H), (L / 2, W / 2, H / 2), 1, 'material="stone"')
    Lp, a = 6.0, math.radians(60.0)
    piv = (0.0, -(W / 2 + 1.0 + 0.01), 3.6 + Lp)
    c = (0.0, piv[1] - Lp * math.sin(a), piv[2] - Lp * math.cos(a))
    s += f'  <body name="pivot" type="static" position="{vec(*piv)}"/>\n'
    s += (f'  <body name="ball" type="dynamic" position="{vec(*c)}">\n'
          f'    <sphere radius="1" mass="10" material="stone"/>\n  </body>\n')
    s += f'  <joint type="ball" name="rope" body_a="pivot" body_b="ball" anchor="{vec(*piv)}"/>\n'
    return s + "</ibdyn>\n"

def tippe_top():
    s = header("DIGEST 23.5 (Fig. 5.13a): tippe top. A sphere (radius 0.5 m, 100 kg/m^3) with a heavy disc inside "
               "(cylinder r 0.35 m, 0.1 m thick, 40 kg, 0.25 m below the centre) and a short stem on top (capsule "
               "r 0.04 m, tip 0.64 m from the centre): centre of mass 0.108 m below the sphere centre, principal "
               "moments 7.94 (transverse, about the centre of mass) and 7.69 kg m^2 (axis). It starts tilted by "
               "0.1 rad with 80 rad/s about its axis on a ground with mu = 0.6 (max mixing) and e = 0. Sliding friction "
               "turns it over within about 6 s; it then spins on the stem with the sphere lifted off the ground "
               "(tests/test_contact_tippe_top.c).",
               'gravity="0 0 -9.81" restitution_mixing="max" friction_mixing="max"', 'timestep="0.001" duration="10"')
    s += '  <material name="felt" restitution="0" static_friction="0.6" dynamic_friction="0.6"/>\n'
    s += ('  <body name="ground" type="static" position="0 0 -0.5">\n'
          '    <box half_extents="20 20 0.5" material="felt"/>\n  </body>\n')
    s += ('  <body name="top" type="dynamic" position="0 0 0.5" rotation_axis_angle="1 0 0 0.1" angular_velocity="0 0 80">\n'
          '    <sphere radius="0.5" density="100" material="felt"/>\n'
          '    <cylinder radius="0.35" half_length="0.05" position="0 0 -0.25" mass="40" material="felt"/>\n'
          '    <capsule radius="0.04" half_length="0.05" position="0 0 0.55" density="100" material="felt"/>\n'
          '  </body>\n')
    return s + "</ibdyn>\n"

def qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)

def qaxis(axis, angle):
    n = math.sqrt(sum(c * c for c in axis))
    h = 0.5 * angle
    return (math.cos(h),) + tuple(math.sin(h) * c / n for c in axis)

def funnel1000():
    import random
    rnd = random.Random(5517)  # fixed seed: the scene is reproducible
    a, z0, b, z1, t = 2.0, 10.0, 10.0, 20.0, 0.5  # opening / top half-widths at z0 / z1, wall thickness
    s = header("DIGEST 23.1 (Fig. 5.7, Table 5.1): 1000 cubes (1 m, 1 kg) fall through a funnel onto the ground. "
               "e = 0.8, mu_s = mu_d = 0.05 for all bodies (max mixing: a pair has exactly these values), Newton's law, "
               "eps_v,c = 0.01 m/s, eps_d = 1e-4 m, h = 0.001 s, 8 s, no shock propagation. [R] The thesis gives no "
               f"funnel geometry: here four static slabs ({num(t)} m thick) form an inverted square pyramid frustum, "
               f"{num(2 * b)} m wide at z = {num(z1)}, with a {num(2 * a)} m x {num(2 * a)} m opening at z = {num(z0)}; "
               "the cubes start in a 10 x 10 x 10 grid (1.5 m spacing, z = 22 ... 35.5 m) with small random rotations "
               "(tools/gen_contact_scenes.py, seed 5517). bench/bench_contacts.c funnel1000 times it.",
               'gravity="0 0 -9.81" collision_tolerance="0.01" contact_position_tolerance="0.0001" '
               'restitution_mixing="max" friction_mixing="max"', 'timestep="0.001" duration="8"')
    s += '  <material name="cube" restitution="0.8" static_friction="0.05" dynamic_friction="0.05"/>\n'
    s += ground(mat='material="cube"')
    dx, dz = b - a, z1 - z0
    ls = math.hypot(dx, dz)
    phi = math.atan2(dx, dz)  # the slab's local z (along the slope) is world z turned by phi about y
    nin = (-dz / ls, dx / ls)  # inward normal of the +x wall in the x-z plane
    mid = ((a + b) / 2, (z0 + z1) / 2)
    cx, cz = mid[0] - nin[0] * t / 2, mid[1] - nin[1] * t / 2
    s += '  <body name="funnel" type="static" position="0 0 0">\n'
    for k in range(4):
        qz = qaxis((0, 0, 1), k * math.pi / 2)
        q = qmul(qz, qaxis((0, 1, 0), phi))
        c, sn = math.cos(k * math.pi / 2), math.sin(k * math.pi / 2)
        pos = (c * cx, sn * cx, cz)
        s += (f'    <box half_extents="{vec(t / 2, b + t, ls / 2)}" position="{vec(*pos)}" rotation="{vec(*q)}" '
              'material="cube"/>\n')
    s += '  </body>\n'
    n = 0
    for k in range(10):
        for j in range(10):
            for i in range(10):
                pos = ((i - 4.5) * 1.5, (j - 4.5) * 1.5, 22.0 + 1.5 * k)
                ax = [rnd.uniform(-1, 1) for _ in range(3)]
                ang = rnd.uniform(-0.3, 0.3)
                rot = vec(*ax, ang) if any(abs(c) > 1e-9 for c in ax) else ""
                s += box(f"c{n}", pos, (0.5, 0.5, 0.5), 1, 'material="cube"', rot)
                n += 1
    return s + "</ibdyn>\n"

def terrain():
    """A bumpy triangle-mesh terrain (one-sided contacts, docs/shapes.md) with mixed bodies dropped onto it."""
    n, cell, amp = 20, 0.5, 0.3
    s = header("Triangle-mesh terrain: 10 m x 10 m of 20 x 20 squares (800 triangles, counter-clockwise from above), "
               "height 0.3 (sin 1.3x cos 0.9y + sin(2.1y + 0.4x) / 2) m, static; twelve bodies of mixed shapes (boxes, "
               "spheres, capsules, cylinders, a hull) dropped from 1.5-4 m, turning, at 60 Hz. The random drops of "
               "tests/test_trimesh_contact.c use the same terrain.",
               'gravity="0 0 -9.81"', 'timestep="0.016666666666666666" duration="6"')
    s += '  <material name="ground" restitution="0" static_friction="0.3" dynamic_friction="0.3"/>\n'
    s += '  <material name="body" restitution="0.2" static_friction="0.3" dynamic_friction="0.3"/>\n'
    verts = []
    for i in range(n + 1):
        for j in range(n + 1):
            x, y = (i - 0.5 * n) * cell, (j - 0.5 * n) * cell
            z = amp * (math.sin(1.3 * x) * math.cos(0.9 * y) + 0.5 * math.sin(2.1 * y + 0.4 * x))
            verts.append(vec(round(x, 6), round(y, 6), round(z, 6)))
    tris = []
    for i in range(n):
        for j in range(n):
            a = i * (n + 1) + j
            b, c = a + 1, a + n + 1
            tris.append(f"{a} {c} {b} {b} {c} {c + 1}")
    s += ('  <body name="terrain" type="static">\n'
          f'    <trimesh material="ground" vertices="{" ".join(verts)}" triangles="{" ".join(tris)}"/>\n  </body>\n')
    shapes = [
        '<box half_extents="0.3 0.2 0.15" density="500" material="body"/>',
        '<sphere radius="0.25" density="500" material="body"/>',
        '<capsule radius="0.12" half_length="0.3" density="500" material="body"/>',
        '<cylinder radius="0.3" half_length="0.1" density="500" material="body"/>',
        '<box half_extents="0.5 0.05 0.25" density="500" material="body"/>',
        '<hull points="-0.2 -0.15 -0.1 0.25 -0.1 -0.12 0.05 0.2 -0.1 -0.1 0.1 0.2 0.2 0.1 0.15 0 -0.2 0.12" density="500" material="body"/>',
    ]
    for k in range(12):
        x, y = -3.0 + 2.0 * (k % 4), -2.0 + 2.0 * (k // 4)
        z = 1.5 + 0.2 * k
        s += (f'  <body name="b{k}" type="dynamic" position="{vec(x, y, z)}" rotation_axis_angle="{vec(1, k % 3, 1, 0.3 * k)}" '
              f'angular_velocity="{vec(0.5 * (k % 5), -1.0, 0.3 * k)}">\n    {shapes[k % len(shapes)]}\n  </body>\n')
    return s + "</ibdyn>\n"

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenes")
    for name, text in [("pyramid20", pyramid20()), ("dominoes", dominoes()), ("inclined_plane", inclined_plane()),
                       ("cradle", cradle()), ("tippe_top", tippe_top()), ("wall252", wall252(False)),
                       ("wall252_shock", wall252(True)), ("funnel1000", funnel1000()), ("terrain", terrain())]:
        sub = "large" if name.startswith(("pyramid", "wall", "funnel")) else ""  # slow scenes: not in cli.sh's 5-step run
        os.makedirs(os.path.join(out, sub), exist_ok=True)
        with open(os.path.join(out, sub, name + ".xml"), "w") as f:
            f.write(text)

if __name__ == "__main__":
    main()
