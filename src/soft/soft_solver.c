/* The generic row solver for particles and rigid bodies (digest §24.5 generalised): per time
 * instant J and K = J M^-1 J^T; joint correction on the predicted row values (the constraint after
 * a free step with the current velocities, §3.2.1, iterated until |C(t0+h)| <= eps_d) and velocity
 * correction (dC/dt = J u = 0 at t0+h, exact per row). A compliance alpha turns the joint
 * correction into the implicit spring C + alpha lambda = 0 (lambda = acc/h, the mean force).
 * The sweeps run inside the rigid joints' loops (solver_iterative.c) or, for the LGS methods,
 * alternate with the rigid solve (ib_soft_*_hybrid, as contacts in §5.4.2). Exception: the edge
 * rows of the joint correction take J at the predicted positions in every sweep (position_step).
 * Warm starts only follow a converged joint correction (ss->warmValid). */
#include <math.h>
#include <string.h>

#include "soft/soft_internal.h"

static inline void part_of(const ibSoftView* v, int k, int32_t* idx, bool* body)
{
	if (v->parts) {
		*idx = v->parts[k].index;
		*body = v->parts[k].isBody != 0;
	} else {
		*idx = v->pidx ? v->pidx[k] : v->first + k;
		*body = false;
	}
}

int ib_soft_view_cols(const ibSoftView* v)
{
	if (!v->parts) return 3 * v->count;
	int c = 0;
	for (int k = 0; k < v->count; ++k) c += v->parts[k].isBody ? 6 : 3;
	return c;
}

ibSoftView ib_soft_row_view(ibSoftStore* ss, ibSoftRow* r)
{
	ibSoftView v = {0};
	v.rows = 1;
	v.row = r;
	if (r->kind == IB_ROW_SURFACE_VOLUME) {
		ibSoftBody* sb = &ss->softs[r->p[0]];
		v.count = sb->count;
		v.first = sb->first;
		v.J = sb->volJ;
	} else {
		v.count = r->count;
		v.pidx = r->p;
		v.J = r->J;
	}
	v.K = &r->K;
	v.Minv = &r->Minv;
	v.acc = &r->acc;
	v.accVel = &r->accVel;
	v.compliance = r->compliance;
	v.tol = r->tol;
	v.velocity = r->compliance <= 0.0;
	return v;
}

ibSoftView ib_soft_con_view(ibSoftCon* c)
{
	ibSoftView v = {0};
	v.rows = c->rows;
	v.count = c->count;
	v.parts = c->parts;
	v.con = c;
	v.J = c->J;
	v.K = c->K;
	v.Minv = c->Minv;
	v.acc = c->acc;
	v.accVel = c->accVel;
	v.compliance = c->compliance;
	v.tol = 0.0; /* world eps_d */
	v.velocity = c->velocity && c->compliance <= 0.0;
	return v;
}

const ibPartState* ib_soft_body_predicted(ibWorld* w, ibSoftStore* ss, int32_t i, double h)
{
	const ibBody* b = &w->bodies[i];
	ibBodyPred* p = &ss->bpred[i];
	if (p->version != b->velVersion) {
		if (b->type == IB_BODY_STATIC) {
			p->st.x = b->st.s;
			p->st.q = b->st.q;
		} else {
			ib_predict_pose(w, b, h, &p->st.x, &p->st.q);
		}
		p->st.R = ibMat3_FromQuat(p->st.q);
		p->version = b->velVersion;
	}
	return &p->st;
}

const ibPartState* ib_soft_gather(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, bool predicted, double h)
{
	ibPartState* s = ss->scratch;
	for (int k = 0; k < v->count; ++k) {
		int32_t idx;
		bool body;
		part_of(v, k, &idx, &body);
		if (body) {
			if (predicted) {
				s[k] = *ib_soft_body_predicted(w, ss, idx, h);
			} else {
				const ibBody* b = &w->bodies[idx];
				s[k].x = b->st.s;
				s[k].q = b->st.q;
				s[k].R = b->R;
			}
		} else {
			const ibParticle* p = &ss->particles[idx];
			s[k].x = predicted ? ibAdd(p->x, ibAdd(ibScale(h, p->v), ibScale(0.5 * h * h * p->invMass, p->f))) : p->x;
		}
	}
	return s;
}

void ib_soft_view_eval(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, const ibPartState* s, double* C, double* J)
{
	if (v->row)
		ib_soft_eval_row(ss, v->row, s, C, J);
	else
		ib_soft_eval_con(w, v->con, s, C, J);
}

void ib_soft_inverse_spd(const double* A, int n, double* out)
{
	double L[IB_SOFT_MAXR * IB_SOFT_MAXR] = {0};
	bool live[IB_SOFT_MAXR];
	double scale = 0.0;
	for (int i = 0; i < n; ++i) scale = fmax(scale, fabs(A[i * n + i]));
	for (int j = 0; j < n; ++j) {
		double d = A[j * n + j];
		for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
		live[j] = d > 1e-13 * scale && d > 0.0;
		double lj = live[j] ? sqrt(d) : 0.0;
		L[j * n + j] = lj;
		for (int i = j + 1; i < n; ++i) {
			double s = A[i * n + j];
			for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
			L[i * n + j] = live[j] ? s / lj : 0.0;
		}
	}
	/* out = L^-T L^-1 column by column (dead pivots: zero rows/columns) */
	for (int c = 0; c < n; ++c) {
		double y[IB_SOFT_MAXR];
		for (int i = 0; i < n; ++i) {
			double s = i == c ? 1.0 : 0.0;
			for (int k = 0; k < i; ++k) s -= L[i * n + k] * y[k];
			y[i] = live[i] ? s / L[i * n + i] : 0.0;
		}
		for (int i = n - 1; i >= 0; --i) {
			double s = y[i];
			for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * out[k * n + c];
			out[i * n + c] = live[i] ? s / L[i * n + i] : 0.0;
		}
	}
}

/* J at the states s (into v->J) and K = J M^-1 J^T. */
static void compute_jk(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, const ibPartState* s)
{
	double C[IB_SOFT_MAXR];
	ib_soft_view_eval(w, ss, v, s, C, v->J);
	int m = v->rows, cols = ib_soft_view_cols(v);
	const double* J = v->J;
	for (int r = 0; r < m * m; ++r) v->K[r] = 0.0;
	int col = 0;
	for (int k = 0; k < v->count; ++k) {
		int32_t idx;
		bool body;
		part_of(v, k, &idx, &body);
		if (body) {
			const ibBody* b = &w->bodies[idx];
			if (ib_is_dynamic(b))
				for (int r = 0; r < m; ++r)
					for (int q = r; q < m; ++q) {
						const double* a = J + r * cols + col;
						const double* c = J + q * cols + col;
						double s2 = b->invMass * (a[0] * c[0] + a[1] * c[1] + a[2] * c[2]);
						for (int i = 0; i < 3; ++i)
							for (int l = 0; l < 3; ++l) s2 += a[3 + i] * b->invInertiaW.m[i][l] * c[3 + l];
						v->K[r * m + q] += s2;
					}
			col += 6;
		} else {
			double im = ss->particles[idx].invMass;
			if (im > 0.0)
				for (int r = 0; r < m; ++r)
					for (int q = r; q < m; ++q) {
						const double* a = J + r * cols + col;
						const double* c = J + q * cols + col;
						v->K[r * m + q] += im * (a[0] * c[0] + a[1] * c[1] + a[2] * c[2]);
					}
			col += 3;
		}
	}
	for (int r = 0; r < m; ++r)
		for (int q = 0; q < r; ++q) v->K[r * m + q] = v->K[q * m + r];
}

void ib_soft_view_prepare(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, uint32_t* epoch)
{
	if (*epoch == w->poseEpoch) return;
	compute_jk(w, ss, v, ib_soft_gather(w, ss, v, false, 0.0));
	*epoch = w->poseEpoch;
}

static void set_minv(const ibSoftView* v, double alphaTilde)
{
	int m = v->rows;
	if (m == 1) {
		double k = v->K[0] + alphaTilde;
		v->Minv[0] = k > 0.0 ? 1.0 / k : 0.0;
		return;
	}
	double A[IB_SOFT_MAXR * IB_SOFT_MAXR];
	memcpy(A, v->K, sizeof(double) * (size_t)(m * m));
	for (int r = 0; r < m; ++r) A[r * m + r] += alphaTilde;
	ib_soft_inverse_spd(A, m, v->Minv);
}

/* Apply the impulse J^T lambda (Delta v = M^-1 J^T lambda). */
void ib_soft_apply(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, const double* lam)
{
	int m = v->rows, cols = ib_soft_view_cols(v), col = 0;
	for (int k = 0; k < v->count; ++k) {
		int32_t idx;
		bool body;
		part_of(v, k, &idx, &body);
		double g[6] = {0};
		int width = body ? 6 : 3;
		for (int r = 0; r < m; ++r)
			for (int i = 0; i < width; ++i) g[i] += lam[r] * v->J[r * cols + col + i];
		if (body) {
			ibBody* b = &w->bodies[idx];
			ib_body_apply_impulse(b, ibV3(g[0], g[1], g[2]), b->st.s);
			ib_body_apply_angular_impulse(b, ibV3(g[3], g[4], g[5]));
		} else {
			ibParticle* p = &ss->particles[idx];
			if (p->invMass > 0.0) p->v = ibMulAdd(p->v, p->invMass, ibV3(g[0], g[1], g[2]));
		}
		col += width;
	}
}

/* J u: the time derivative of the rows at the current velocities. */
void ib_soft_rate(const ibWorld* w, const ibSoftStore* ss, const ibSoftView* v, double* out)
{
	int m = v->rows, cols = ib_soft_view_cols(v), col = 0;
	for (int r = 0; r < m; ++r) out[r] = 0.0;
	for (int k = 0; k < v->count; ++k) {
		int32_t idx;
		bool body;
		part_of(v, k, &idx, &body);
		double u[6];
		int width = body ? 6 : 3;
		if (body) {
			const ibBody* b = &w->bodies[idx];
			ibVec3 a = b->st.v, c = b->st.w;
			u[0] = a.x, u[1] = a.y, u[2] = a.z, u[3] = c.x, u[4] = c.y, u[5] = c.z;
		} else {
			ibVec3 a = ss->particles[idx].v;
			u[0] = a.x, u[1] = a.y, u[2] = a.z;
		}
		for (int r = 0; r < m; ++r)
			for (int i = 0; i < width; ++i) out[r] += v->J[r * cols + col + i] * u[i];
		col += width;
	}
}

static double norm(const double* x, int n)
{
	double s = 0.0;
	for (int i = 0; i < n; ++i) s += x[i] * x[i];
	return sqrt(s);
}

/* Joint correction of one row set. Edge rows take their impulse direction at the predicted
 * positions (each correction is then the exact projection of the two particles onto the edge
 * length, a Newton step at the iterate): with the t0 direction a straight edge between held points
 * that has to sag, or a flat cloth whose edges turn out of its plane within the step, cannot be
 * corrected (the t0 directions lie in the plane), and the sweeps diverged. The other rows keep J
 * at t0 (exact momentum balance of the rigid couplings, §3.2.1). */
static bool position_step(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, double h, double tol)
{
	double C[IB_SOFT_MAXR], lam[IB_SOFT_MAXR];
	const ibPartState* s = ib_soft_gather(w, ss, v, true, h);
	int m = v->rows;
	ibSoftRow* edge = v->row && v->row->kind == IB_ROW_DISTANCE ? (ibSoftRow*)v->row : NULL;
	if (edge) {
		/* J = scale (-u, u) with a unit u: K = scale^2 (1/m0 + 1/m1) and Minv stay those of t0 */
		ib_soft_view_eval(w, ss, v, s, C, v->J);
		/* the spring's impulse so far is the applied impulse along the edge as it is now (the
		 * directions of earlier sweeps differ): J of p[1] is scale * u */
		const double* u = edge->J + 3;
		double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
		edge->acc = uu > 0.0 ? (edge->accJ[0] * u[0] + edge->accJ[1] * u[1] + edge->accJ[2] * u[2]) / uu : 0.0;
	} else {
		ib_soft_view_eval(w, ss, v, s, C, NULL);
	}
	for (int r = 0; r < m; ++r) C[r] += v->compliance * v->acc[r] / h;
	if (norm(C, m) <= tol) return false;

	for (int r = 0; r < m; ++r) {
		double x = 0.0;
		for (int q = 0; q < m; ++q) x += v->Minv[r * m + q] * C[q];
		lam[r] = -x / h;
		v->acc[r] += lam[r];
	}
	if (edge)
		for (int k = 0; k < 3; ++k) edge->accJ[k] += lam[0] * edge->J[3 + k];
	ib_soft_apply(w, ss, v, lam);
	return true;
}

static bool velocity_step(ibWorld* w, ibSoftStore* ss, const ibSoftView* v)
{
	if (!v->velocity) return false;
	double du[IB_SOFT_MAXR], lam[IB_SOFT_MAXR];
	ib_soft_rate(w, ss, v, du);
	int m = v->rows;
	if (norm(du, m) <= w->solver.velocityTolerance) return false;
	for (int r = 0; r < m; ++r) {
		double x = 0.0;
		for (int q = 0; q < m; ++q) x += v->Minv[r * m + q] * du[q];
		lam[r] = -x;
		v->accVel[r] += lam[r];
	}
	ib_soft_apply(w, ss, v, lam);
	return true;
}

static bool has_rows(const ibWorld* w)
{
	const ibSoftStore* ss = w->soft;
	return ss && (ss->rowCount > 0 || ss->conCount > 0 || ss->contactCount > 0);
}

static double row_tol(const ibWorld* w, const ibSoftView* v)
{
	return v->tol > 0.0 ? v->tol : w->solver.positionTolerance;
}

void ib_soft_position_begin(ibWorld* w, double h)
{
	ibSoftStore* ss = w->soft;
	if (!has_rows(w) || ss->depth++ > 0) return;
	if (!ib_grow(w, (void**)&ss->bpred, &ss->bpredCapacity, w->bodyHigh + 1, sizeof(ibBodyPred))) {
		ss->depth--; /* out of memory: the soft rows are skipped this step */
		return;
	}
	for (int32_t i = 0; i < w->bodyHigh; ++i) ss->bpred[i].version = ~w->bodies[i].velVersion;
	/* warm start only from a converged correction: the impulses of unconverged sweeps (or the
	 * self-stress a flat cloth's redundant edges can hold, invisible to its t0 Jacobian) act as
	 * spurious forces once the cloth has moved, and fed a divergence */
	bool warm = w->solver.warmStart && ss->warmValid;
	for (int32_t k = 0; k < ss->rowCount; ++k) {
		ibSoftRow* r = &ss->rows[k];
		ibSoftView v = ib_soft_row_view(ss, r);
		ib_soft_view_prepare(w, ss, &v, &r->epoch);
		set_minv(&v, r->compliance / (h * h));
		r->acc = 0.0;
		if (warm && r->warm != 0.0) {
			r->acc = r->warm;
			ib_soft_apply(w, ss, &v, &r->warm);
		}
		if (r->kind == IB_ROW_DISTANCE)
			for (int i = 0; i < 3; ++i) r->accJ[i] = r->acc * r->J[3 + i];
	}
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		ibSoftCon* c = &ss->cons[i];
		if (!c->inUse) continue;
		ibSoftView v = ib_soft_con_view(c);
		ib_soft_view_prepare(w, ss, &v, &c->epoch);
		set_minv(&v, c->compliance / (h * h));
		memset(c->acc, 0, sizeof c->acc);
		if (warm) {
			memcpy(c->acc, c->warm, sizeof c->acc);
			if (norm(c->warm, c->rows) > 0.0) ib_soft_apply(w, ss, &v, c->warm);
		}
	}
	ss->stats.sparseSolves = 0;
	ss->stats.sparseFactorizations = ss->stats.sparseRelinearisations = 0;
	if (ib_soft_sparse_wanted(ss))
		ib_soft_sparse_begin(w, ss, false, h);
	else
		ss->sparsePosition = false;
	ib_soft_contacts_position_begin(w, ss, h);
	ss->stats.positionSweeps = 0;
	ss->stats.velocitySweeps = 0;
	ss->sweep = 0;
	ss->capped = false;
	ss->lastCorrected = false;
}

/* Rows of the soft bodies still within their sweep cap; rows past it are left as they are (anytime
 * cloth) and do not keep the loop going. */
static bool sweep_rows(ibWorld* w, ibSoftStore* ss, bool velocity, double h)
{
	bool corrected = false, sparse = velocity ? ss->sparseVelocity : ss->sparsePosition;
	if (sparse && (velocity ? ib_soft_sparse_velocity_sweep(w, ss) : ib_soft_sparse_position_sweep(w, ss, h)))
		corrected = true;
	for (int32_t si = 0; si < ss->softHigh; ++si) {
		const ibSoftBody* sb = &ss->softs[si];
		if (!sb->inUse || sb->rowCount == 0) continue;
		if (sparse && ib_soft_solver_of(sb) == IB_SOFT_SOLVER_SPARSE) continue; /* rows in the sparse system */
		if (sb->maxIter > 0 && ss->sweep >= sb->maxIter) continue;
		bool any = false;
		for (int32_t k = sb->firstRow; k < sb->firstRow + sb->rowCount; ++k) {
			ibSoftView v = ib_soft_row_view(ss, &ss->rows[k]);
			if (velocity ? velocity_step(w, ss, &v) : position_step(w, ss, &v, h, row_tol(w, &v))) any = true;
		}
		if (any && sb->maxIter > 0 && ss->sweep == sb->maxIter - 1) ss->capped = true;
		corrected |= any;
	}
	return corrected;
}

bool ib_soft_position_sweep(ibWorld* w, double h)
{
	ibSoftStore* ss = w->soft;
	if (!has_rows(w) || ss->depth == 0) return false;
	bool corrected = sweep_rows(w, ss, false, h);
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		if (!ss->cons[i].inUse || (ss->sparsePosition && ss->cons[i].inSparse)) continue;
		ibSoftView v = ib_soft_con_view(&ss->cons[i]);
		if (position_step(w, ss, &v, h, w->solver.positionTolerance)) corrected = true;
	}
	if (ss->contactCount > 0 && ib_soft_contacts_position_sweep(w, ss, h)) corrected = true;
	ss->sweep++;
	ss->stats.positionSweeps++;
	ss->lastCorrected = corrected;
	return corrected;
}

void ib_soft_position_end(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!has_rows(w) || ss->depth == 0 || --ss->depth > 0) return;
	if (ss->sparsePosition) ib_soft_sparse_position_end(w, ss, ss->resumeH); /* h of this correction */
	ss->warmValid = !ss->lastCorrected && !ss->capped;
	for (int32_t k = 0; k < ss->rowCount; ++k) ss->rows[k].warm = ss->rows[k].acc;
	for (int32_t i = 0; i < ss->conHigh; ++i)
		if (ss->cons[i].inUse) memcpy(ss->cons[i].warm, ss->cons[i].acc, sizeof ss->cons[i].acc);
	if (!ss->sparsePosition) return;
	/* no warm start for the sparse rows: the direct solve does not need it, and the least-squares
	 * split of redundant rows' impulses need not fit the next step's Jacobian */
	for (int32_t si = 0; si < ss->softHigh; ++si) {
		const ibSoftBody* sb = &ss->softs[si];
		if (sb->inUse && ib_soft_solver_of(sb) == IB_SOFT_SOLVER_SPARSE)
			for (int32_t k = sb->firstRow; k < sb->firstRow + sb->rowCount; ++k) ss->rows[k].warm = 0.0;
	}
	for (int32_t i = 0; i < ss->conHigh; ++i)
		if (ss->cons[i].inUse && ss->cons[i].inSparse) memset(ss->cons[i].warm, 0, sizeof ss->cons[i].warm);
}

void ib_soft_velocity_begin(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!has_rows(w) || ss->depth++ > 0) return;
	for (int32_t k = 0; k < ss->rowCount; ++k) {
		ibSoftRow* r = &ss->rows[k];
		r->accVel = 0.0;
		if (r->compliance > 0.0) continue;
		ibSoftView v = ib_soft_row_view(ss, r);
		ib_soft_view_prepare(w, ss, &v, &r->epoch);
		set_minv(&v, 0.0);
	}
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		ibSoftCon* c = &ss->cons[i];
		if (!c->inUse) continue;
		memset(c->accVel, 0, sizeof c->accVel);
		ibSoftView v = ib_soft_con_view(c);
		if (!v.velocity) continue;
		ib_soft_view_prepare(w, ss, &v, &c->epoch);
		set_minv(&v, 0.0);
	}
	if (ib_soft_sparse_wanted(ss))
		ib_soft_sparse_begin(w, ss, true, 0.0);
	else
		ss->sparseVelocity = false;
	ib_soft_contacts_velocity_begin(w, ss);
	ss->sweep = 0;
}

bool ib_soft_velocity_sweep(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!has_rows(w) || ss->depth == 0) return false;
	bool corrected = sweep_rows(w, ss, true, 0.0);
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		if (!ss->cons[i].inUse || (ss->sparseVelocity && ss->cons[i].inSparse)) continue;
		ibSoftView v = ib_soft_con_view(&ss->cons[i]);
		if (velocity_step(w, ss, &v)) corrected = true;
	}
	if (ss->contactCount > 0 && ib_soft_contacts_velocity_sweep(w, ss)) corrected = true;
	ss->sweep++;
	ss->stats.velocitySweeps++;
	return corrected;
}

void ib_soft_velocity_end(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!has_rows(w) || ss->depth == 0 || --ss->depth > 0) return;
	for (int32_t i = 0; i < ss->conHigh; ++i)
		if (ss->cons[i].inUse) memcpy(ss->cons[i].warmVel, ss->cons[i].accVel, sizeof ss->cons[i].accVel);
}

/* Worlds without rigid joints: Alg. 3.1 / 3.2 over the soft rows alone. */
ibResult ib_soft_position_correction(ibWorld* w, double h)
{
	if (!has_rows(w)) return IB_OK;
	ib_soft_position_begin(w, h);
	int it = 0;
	bool corrected = true;
	while (corrected && it < w->solver.maxPositionIterations) {
		corrected = ib_soft_position_sweep(w, h);
		++it;
	}
	if (corrected) w->stats.converged = false;
	w->stats.positionIterations += it;
	ib_soft_position_end(w);
	return IB_OK;
}

ibResult ib_soft_velocity_correction(ibWorld* w, double h)
{
	(void)h;
	if (!has_rows(w)) return IB_OK;
	ib_soft_velocity_begin(w);
	int it = 0;
	bool corrected = true;
	while (corrected && it < w->solver.maxVelocityIterations) {
		corrected = ib_soft_velocity_sweep(w);
		++it;
	}
	if (corrected) w->stats.converged = false;
	w->stats.velocityIterations += it;
	ib_soft_velocity_end(w);
	return IB_OK;
}

/* LGS methods: the rigid system is solved by its own method, then the soft rows are iterated, and
 * the two alternate until a soft sweep after a rigid solve finds nothing to correct (the rigid
 * joints were just fulfilled, the soft rows then untouched) or the iteration cap is reached. */
ibResult ib_soft_position_hybrid(ibWorld* w, double h, ibResult (*rigid)(ibWorld*, double))
{
	if (!has_rows(w)) return rigid(w, h);
	ib_soft_position_begin(w, h);
	ibResult r = rigid(w, h);
	bool warm = w->solver.warmStart;
	int cap = w->solver.maxPositionIterations, total = 0;
	bool done = false;
	for (int outer = 0; outer < cap && r == IB_OK && !done; ++outer) {
		int it = 0;
		bool corrected = true;
		while (corrected && it < cap) {
			corrected = ib_soft_position_sweep(w, h);
			++it;
		}
		total += it;
		if (corrected) break;
		if (it == 1) { /* the soft rows held after the rigid solve */
			done = true;
			break;
		}
		w->solver.warmStart = false;
		r = rigid(w, h);
		w->solver.warmStart = warm;
	}
	if (!done) w->stats.converged = false;
	w->stats.positionIterations += total;
	ib_soft_position_end(w);
	return r;
}

ibResult ib_soft_velocity_hybrid(ibWorld* w, double h, ibResult (*rigid)(ibWorld*, double))
{
	if (!has_rows(w)) return rigid(w, h);
	ib_soft_velocity_begin(w);
	ibResult r = rigid(w, h);
	int cap = w->solver.maxVelocityIterations;
	bool done = false;
	for (int outer = 0; outer < cap && r == IB_OK; ++outer) {
		int it = 0;
		bool corrected = true;
		while (corrected && it < cap) {
			corrected = ib_soft_velocity_sweep(w);
			++it;
		}
		if (corrected) break;
		if (it == 1) {
			done = true;
			break;
		}
		r = rigid(w, h);
	}
	if (!done) w->stats.converged = false;
	ib_soft_velocity_end(w);
	return r;
}

/* Errors after the step from the states alone. */
void ib_soft_measure(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!ss) return;
	ibSoftStepStats* st = &ss->stats;
	st->particleCount = ss->particleCount;
	st->constraintRows = ss->rowCount;
	st->maxJointError = st->maxInternalError = st->maxJointVelocityError = 0.0;
	st->internalConverged = !ss->capped;
	double C[IB_SOFT_MAXR], du[IB_SOFT_MAXR];
	for (int32_t k = 0; k < ss->rowCount; ++k) {
		ibSoftRow* r = &ss->rows[k];
		if (r->compliance > 0.0) continue;
		ibSoftView v = ib_soft_row_view(ss, r);
		ib_soft_view_eval(w, ss, &v, ib_soft_gather(w, ss, &v, false, 0.0), C, NULL);
		st->maxInternalError = fmax(st->maxInternalError, fabs(C[0]));
	}
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		ibSoftCon* c = &ss->cons[i];
		if (!c->inUse) continue;
		ibSoftView v = ib_soft_con_view(c);
		ib_soft_view_prepare(w, ss, &v, &c->epoch);
		ib_soft_view_eval(w, ss, &v, ib_soft_gather(w, ss, &v, false, 0.0), C, NULL);
		ib_soft_rate(w, ss, &v, du);
		c->err = norm(C, c->rows);
		c->verr = norm(du, c->rows);
		st->maxJointError = fmax(st->maxJointError, c->err);
		if (v.velocity) st->maxJointVelocityError = fmax(st->maxJointVelocityError, c->verr);
	}
}
