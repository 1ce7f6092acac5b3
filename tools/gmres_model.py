#!/usr/bin/env python3
"""A NumPy model of restarted GMRES(m) with left Jacobi, in three forms, to
weigh a change to pgmresfused before it is built (docs/convergence.md,
"GMRES stagnation inside a cycle"):

  sgmres    simpler GMRES (Walker and Zhou) as pgmresfused runs it: Z = [r0/|r0|,
            v_0, ..., v_{m-2}], A Z = V R by classical Gram-Schmidt, xi_j =
            <v_j, r_j>, r_{j+1} = r_j - xi_j v_j kept as a vector
  adaptive  adaptive simpler GMRES (Jiranek and Rozloznik 2010), as
            -ksp_pgmresfused_adaptive nu makes it: z_j = r_j / |r_{j-1}|
            where the last step cut the residual by at least nu (|r_j|^2 =
            |r_{j-1}|^2 - xi_{j-1}^2 <= nu^2 |r_{j-1}|^2), else v_{j-1}
  givens    Arnoldi with classical Gram-Schmidt and Givens rotations, as
            PETSc's gmres (no second pass)

Usage: gmres_model.py MATRIX.mtx [-scale S] [-rtol R] [-restart M] [-nu NU]
The matrix is scaled and b formed as examples/problems.c does
(-problem_scale, ProblemExactSolution); each form prints its iteration count
and the norm it stopped at. Needs numpy and scipy (pip)."""
import argparse
import numpy as np
import scipy.io
import scipy.sparse as sp


def problem(path, scale):
    A = sp.csr_matrix(scipy.io.mmread(path))
    n = A.shape[0]
    if scale != 1.0:
        i = np.arange(n, dtype=np.uint64)
        h = (i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
        u = 2.0 * (h.astype(np.float64) / 4294967295.0) - 1.0
        d = scale ** u
        A = sp.csr_matrix(sp.diags(d) @ A @ sp.diags(d))
    x = 1.0 + 0.5 * np.sin(6.283185307179586 * np.arange(n) / n * 3.0)
    return A, A @ x


def cycle_sgmres(A, Binv, x, b, m, its0, ttol, max_it, nu=None):
    r = Binv * (b - A @ x)
    rn = np.linalg.norm(r)
    hist = [rn]
    if rn <= ttol:
        return x, its0, hist, True
    Zcoef = []  # z_j as coefficients over [r0, v_0, ...]: z_j = c0 r0 + sum c_l v_l
    V, R, xi = [], np.zeros((m, m)), np.zeros(m)
    r0 = r.copy()
    z = r / rn
    zc = np.zeros(m + 1); zc[0] = 1.0 / rn
    rprev = rn
    for j in range(m):
        Zcoef.append(zc)
        w = Binv * (A @ z)
        h = np.array([v @ w for v in V])
        w = w - (np.array(V).T @ h if V else 0.0)
        rjj = np.linalg.norm(w)
        R[:j, j] = h
        R[j, j] = rjj
        v = w / rjj
        V.append(v)
        xi[j] = v @ r
        r = r - xi[j] * v
        rn_new = np.linalg.norm(r)
        hist.append(rn_new)
        if rn_new <= ttol or its0 + j + 1 >= max_it:
            k = j + 1
            break
        # the next basis vector: as pgmresfused decides it, before |r_{j+1}|
        # is reduced: from |r_j|^2 - xi_j^2, and scaled by 1 / |r_j|
        if nu is not None and xi[j] ** 2 >= (1.0 - nu * nu) * rprev ** 2:
            z = r / rprev
            # r_{j+1} = r0 - sum_{l<=j} xi_l v_l
            zc = np.zeros(m + 1); zc[0] = 1.0 / rprev
            zc[1:j + 2] = -xi[:j + 1] / rprev
        else:
            z = v
            zc = np.zeros(m + 1); zc[j + 1 + 0] = 0.0; zc[1 + j] = 1.0
        rprev = rn_new
    else:
        k = m
    t = np.linalg.solve(np.triu(R[:k, :k]), xi[:k])
    basis = np.vstack([r0] + V[:k])  # rows: r0, v_0, ..., v_{k-1}
    C = np.array(Zcoef[:k])          # k x (m+1)
    x = x + (C[:, :k + 1] @ basis[:k + 1]).T @ t
    return x, its0 + k, hist, hist[-1] <= ttol


def cycle_givens(A, Binv, x, b, m, its0, ttol, max_it):
    r = Binv * (b - A @ x)
    beta = np.linalg.norm(r)
    hist = [beta]
    if beta <= ttol:
        return x, its0, hist, True
    U = [r / beta]
    H = np.zeros((m + 1, m))
    cs, sn = np.zeros(m), np.zeros(m)
    g = np.zeros(m + 1); g[0] = beta
    k = m
    for j in range(m):
        w = Binv * (A @ U[j])
        h = np.array([u @ w for u in U])
        w = w - np.array(U).T @ h
        H[:j + 1, j] = h
        H[j + 1, j] = np.linalg.norm(w)
        for i in range(j):
            a, c = H[i, j], H[i + 1, j]
            H[i, j], H[i + 1, j] = cs[i] * a + sn[i] * c, -sn[i] * a + cs[i] * c
        den = np.hypot(H[j, j], H[j + 1, j])
        cs[j], sn[j] = H[j, j] / den, H[j + 1, j] / den
        H[j, j], H[j + 1, j] = den, 0.0
        g[j + 1] = -sn[j] * g[j]
        g[j] = cs[j] * g[j]
        hist.append(abs(g[j + 1]))
        if H[j + 1, j] == 0.0:
            pass
        U.append(w / np.linalg.norm(w))
        if abs(g[j + 1]) <= ttol or its0 + j + 1 >= max_it:
            k = j + 1
            break
    y = np.linalg.solve(np.triu(H[:k, :k]), g[:k])
    x = x + np.array(U[:k]).T @ y
    return x, its0 + k, hist, hist[-1] <= ttol


def solve(A, b, form, m, rtol, max_it, nu):
    Binv = 1.0 / A.diagonal()
    x = np.zeros_like(b)
    ttol = rtol * np.linalg.norm(Binv * b)
    its, done = 0, False
    while not done and its < max_it:
        if form == "givens":
            x, its, hist, done = cycle_givens(A, Binv, x, b, m, its, ttol, max_it)
        else:
            x, its, hist, done = cycle_sgmres(A, Binv, x, b, m, its, ttol, max_it, nu if form == "adaptive" else None)
    return its, hist[-1], np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("matrix")
    ap.add_argument("-scale", type=float, default=1.0)
    ap.add_argument("-rtol", type=float, default=1e-8)
    ap.add_argument("-restart", type=int, default=30)
    ap.add_argument("-nu", type=float, default=0.9)
    ap.add_argument("-max_it", type=int, default=5000)
    a = ap.parse_args()
    A, b = problem(a.matrix, a.scale)
    for form in ("sgmres", "adaptive", "givens"):
        its, last, true = solve(A, b, form, a.restart, a.rtol, a.max_it, a.nu)
        print(f"{form:9s} its {its:5d}  last norm {last:.3e}  true rel. residual {true:.3e}")


if __name__ == "__main__":
    main()
