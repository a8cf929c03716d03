/* Cubes falling onto each other at 60 Hz (issue 6, bench_contacts rain1000 in small;
 * docs/contacts.md "Box piles at 60 Hz"). Settings as the bench: eps_c 1e-4 m, eps_d 1e-5 m,
 * eps_v 1e-4 m/s, eps_v,c 1e-3 m/s, mu 0.25 + 0.25, e = 0, h = 1/60 s, unit cubes of 1 kg.
 * Penetration is measured exactly (GJK/EPA over all shape pairs), not by the solver.
 *  - a cube that lands tilted, touching the ground with one edge and turning fast onto its face:
 *    its other corners were not in the contact region at t0 and went 2-3 cm into the ground in one
 *    step; with the speculative points (src/contact/contact_speculative.c) they stay within
 *    eps_d + eps_c;
 *  - 20 cubes in 4 columns of 5, random orientations, falling onto each other from up to 9.5 m:
 *    they sank into each other by up to 0.6 m (a tilted cube deep in another one had 1 of its 4
 *    points); now the deepest penetration while they tumble is a few cm (impacts at ~13 m/s), and
 *    in the 4th second every pair of resting bodies is within eps_d + eps_c after steps that converged
 *    (a cube still tumbles off the pile then: 4e-4 m in its moving contact; and a single step at 2.5 s
 *    had 2.7e-4 m between two slow cubes with the RK4 rotation of cubes), within 10 (eps_d + eps_c) after
 *    steps whose loops stalled (anytime results, reported not converged: session 18's seed study found
 *    up to 1.5e-4 m there, and at most 1.3e-5 m after converged steps, over seeds 1, 3-16), the energy
 *    never grows and nothing is in the ground. A cube that would start inside a neighbour is drawn again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "collision/collision_world.h"
#include "dynamics/world.h"
#include "ibdyn/ibdyn.h"

#define EPS_C 1e-4
#define EPS_D 1e-5
#define H (1.0 / 60.0)
#define MAX_CUBES 32

static uint64_t rng_state;
static double urand(void)
{
	rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static unsigned g_seedOffset; /* added to the pile's seed (test_rain_pile_stall's second start) */
static bool g_spec; /* ibCollisionSettings.speculativeApproach of the next world */
static int g_stall = -1; /* ibContactSettings.stallSweeps of the next world (-1: default) */
static long g_sweeps;    /* contact sweeps (collision, position, velocity) of the last rain_pile_ex */
static int g_velocityCut; /* its steps whose contact velocity loop ended with a residual */
static int g_stalled;    /* its steps whose loops ended early, reported not converged */

static ibWorldId bench_world_toi(int maxToiSubsteps)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.maxToiSubsteps = maxToiSubsteps;
	wd.collision.speculativeApproach = g_spec;
	wd.collision.contactTolerance = EPS_C;
	wd.solver.velocityTolerance = 1e-4;
	wd.solver.contact.collisionTolerance = 1e-3;
	wd.solver.contact.contactPositionTolerance = EPS_D;
	if (g_stall >= 0) wd.solver.contact.stallSweeps = g_stall;
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	gd.position = ibV3(0, 0, -0.5);
	ibBodyId g = ibCreateBody(w, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){0.0, 0.25, 0.25};
	ibBox gb = {{50.0, 50.0, 0.5}};
	ibCreateBoxShape(g, &sd, &gb);
	return w;
}

static ibWorldId bench_world(void) { return bench_world_toi(8); }

static ibBodyId cube(ibWorldId w, ibVec3 p, ibQuat q, ibVec3 v, ibVec3 om)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = p;
	bd.rotation = q;
	bd.linearVelocity = v;
	bd.angularVelocity = om;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){0.0, 0.25, 0.25};
	sd.mass = 1.0;
	ibBox bb = {{0.5, 0.5, 0.5}};
	ibCreateBoxShape(b, &sd, &bb);
	return b;
}

/* deepest penetration over all shape pairs (brute force, exact for boxes) */
static bool slow(const ibBody* b)
{
	return b->type == IB_BODY_STATIC || (ibLength(b->st.v) < 0.1 && ibLength(b->st.w) < 0.1);
}

/* restingOnly: only pairs of bodies slower than 0.1 m/s and 0.1 rad/s */
static double deepest_of(ibWorldId id, bool restingOnly)
{
	ibWorld* w = ib_world_get(id);
	double worst = 0.0;
	for (int32_t i = 0; i < w->shapeHigh; ++i)
		for (int32_t j = i + 1; j < w->shapeHigh; ++j) {
			const ibShape *p = &w->shapes[i], *q = &w->shapes[j];
			if (!p->inUse || !q->inUse) continue;
			ibConvex ca, cb;
			if (!ib_shape_convex(&w->bodies[p->body], p, &ca) || !ib_shape_convex(&w->bodies[q->body], q, &cb)) continue;
			if (restingOnly && !(slow(&w->bodies[p->body]) && slow(&w->bodies[q->body]))) continue;
			worst = fmax(worst, -ib_convex_query(&ca, &cb, NULL).distance);
		}
	return worst;
}

static double deepest(ibWorldId id) { return deepest_of(id, false); }

/* kinetic + potential energy of unit cubes of 1 kg (I = m a^2 / 6) */
static double energy(const ibBodyId* b, int n)
{
	double e = 0.0;
	for (int i = 0; i < n; ++i) {
		ibVec3 v = ibBody_GetLinearVelocity(b[i]), om = ibBody_GetAngularVelocity(b[i]);
		e += 9.81 * ibBody_GetPosition(b[i]).z + 0.5 * ibDot(v, v) + 0.5 / 6.0 * ibDot(om, om);
	}
	return e;
}

/* A cube tilted by 0.05 rad about x with its lowest edge on the ground, turning at 4 rad/s onto its
 * face and falling at 1 m/s: the far edge (5 cm up) reaches the ground within the first step. */
static void test_tilted_landing(void** state)
{
	(void)state;
	ibWorldId w = bench_world();
	double a = 0.05;
	ibQuat q = ibQuatFromAxisAngle(ibV3(1, 0, 0), a);
	/* lowest edge: body corners (y, z) = (-0.5, -0.5) rotated: z = -0.5 cos a - 0.5 sin a (y -0.5 side) */
	double zc = 0.5 * cos(a) + 0.5 * sin(a);
	ibBodyId b = cube(w, ibV3(0, 0, zc), q, ibV3(0, 0, -1.0), ibV3(-4.0, 0, 0));
	double worst = 0.0;
	for (int k = 0; k < 60; ++k) {
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		double d = deepest(w);
		if (d > EPS_D + EPS_C) printf("step %d: penetration %.3e m\n", k + 1, d);
		worst = fmax(worst, d);
	}
	printf("tilted landing: deepest penetration %.3e m, final z %.6f m\n", worst, ibBody_GetPosition(b).z);
	assert_true(worst <= EPS_D + EPS_C);
	assert_true(fabs(ibBody_GetPosition(b).z - 0.5) <= EPS_D + EPS_C);
	ibDestroyWorld(w);
}

/* A cube flat on the ground, spun slowly about a horizontal axis: one edge comes down (a collision), the cube
 * then rocks on it, lifting the other edge at 0.05-0.1 m/s, between eps_rc (0.044 m/s) and |g| h (0.16 m/s),
 * and gravity brings that edge back within the step. Classified by velocity alone, the lifting edge was no
 * contact joint for that step and sank into the ground in steps whose loops all converged (4.5e-4 m at 0.18
 * rad/s; session 34: the lifting points, contact_collide.c; now ~2e-7 m). */
static void test_rocking_cube(void** state)
{
	(void)state;
	const double om[] = {0.18, 0.19, 0.20, 0.21};
	for (int i = 0; i < 4; ++i) {
		ibWorldId w = bench_world();
		ibBodyId b = cube(w, ibV3(0, 0, 0.5), IB_QUAT_IDENTITY, ibV3(0, 0, 0), ibV3(om[i], 0, 0));
		double worst = 0.0, worstConverged = 0.0;
		for (int k = 0; k < 120; ++k) {
			assert_int_equal(ibWorld_Step(w, H), IB_OK);
			double d = deepest(w);
			worst = fmax(worst, d);
			if (ibWorld_GetStepStats(w).converged) worstConverged = fmax(worstConverged, d);
		}
		printf("rocking cube, omega %.2f rad/s: deepest %.3e m, after converged steps %.3e m, final z %.6f m\n", om[i], worst,
		       worstConverged, ibBody_GetPosition(b).z);
		assert_true(worstConverged <= EPS_D + EPS_C);
		assert_true(worst <= EPS_D + EPS_C);
		ibDestroyWorld(w);
	}
}

/* One step from states of the 20-cube rain (position, rotation w x y z, velocity, angular velocity of each cube;
 * recorded before the steps in which session 34's code put two cubes deep into each other; tests/ has no data
 * files, so they are inline). Each is one deterministic step: its deepest pair after it must be within
 * eps_d + eps_c. Before session 35 these steps ended 8.5e-3 to 3.6e-2 m deep; the cause in each is named. */
typedef struct RainSnapshot {
	int spec; /* speculative approach */
	double cube[20][13];
} RainSnapshot;

static const RainSnapshot SNAPSHOTS[] = {
	{0, /* RAIN_SEED=4, time-of-contact search, step 72: a point separating at t0 (2.7e-2 m before the active set of the separating points, 1.1e-6 m with it) */
	 {
	  {0.079587497556213763, -0.21228920112176958, 0.50680621882532062, -0.19098985721665473, 0.68510015864298679, 0.19362582429061345, 0.67577339932517089, -0.9313896800489706, -0.31484943821553335, -1.3861449827441743, 1.471427787903463, -2.3952228239880395, -0.81961422871759071},
	  {2.1544335022178456, 0.33819454083015188, 0.54574145976521793, -0.50502451618466904, 0.54117235240028416, 0.45511810083957638, 0.49492447639832987, -0.11394056484900042, 0.0086831815325644907, -0.094146233273412039, -0.015910950538360422, -0.20878135161149647, 6.1572390551293064e-08},
	  {0.15420682914128847, 1.8253882876747176, 0.55019335218451193, 0.21380650869073076, -0.64034274132791991, -0.19222134935781768, -0.7122491862551934, -0.14202213772527919, -0.094438046470728149, 0.1371416882614275, 0.17011503170400835, -0.2578120412580408, -0.0012467770448192075},
	  {1.9780595991536716, 1.5835204616229723, 0.57095259611288929, -0.57760979378019661, 0.324241392296228, -0.63756533432990592, -0.39337627039743756, 0.47127459148629558, -0.025991913102836675, 0.49637973491671983, 0.12571307590331435, 0.85399421964868083, -0.074634893419499762},
	  {-0.10609221400011504, 0.12595563258859002, 1.5133194136478012, -0.65507381511626384, 0.65977825269702717, -0.26751939721644402, 0.25299076293420553, -2.3655130280827406, -1.7412135022989617, -1.0256880192382218, 1.8212348391498838, -1.9162038034869004, -1.1618091182463244},
	  {2.2256430430365257, 0.42971845357774913, 1.7251021737552017, -0.66956606129725837, -0.28030830940319668, -0.68483588737491674, -0.0640964008490994, 0.14647865394256412, 1.1945891433794231, -0.50631122462471334, -1.983759919574613, 0.45242548122386633, 0.45828723938225185},
	  {0.15007529136065273, 1.5574615909611, 1.5415890658924392, -0.59044566906044149, 0.59222002003978369, 0.42406755859215362, -0.34758605481453997, -0.44300762426765089, -0.25144412977886438, 0.13212791974424201, 0.13500000101577628, -0.33935566967788261, -0.016423410409484137},
	  {2.6502434995301773, 1.5952955370130182, 1.505435945081276, 0.75442787561963132, 0.11111353578716889, 0.054125826202140341, 0.64464157296195168, 1.7177000659982369, -0.16612329649641538, -0.12900150584396208, 0.23642795600649361, 1.2947721812588966, -0.55393264671133835},
	  {-1.1854529431740206, -0.70331351227162608, 1.3446701156538181, 0.026629883780061363, -0.5613478659505774, 0.20029237864650001, 0.80253497477600344, -2.5820378152404531, -2.0279532306672001, -6.403378755929376, 0.7800902293298394, 0.49127608144523699, -1.2939488790359615},
	  {2.7767671792613449, -0.075766144537090588, 2.932146198850937, -0.083448645420165071, 0.86067210234378499, 0.37371686076921917, 0.33558242475056582, 2.6919194470390209, -0.4671918961882196, -1.5323778511705934, 2.7097125469663159, 2.9612712982647684, -1.4176981994148177},
	  {-0.28616420436635936, 1.4042122608717746, 2.5121982913354031, -0.40609531581505209, 0.46002953467259139, 0.59227118355391306, -0.522182216121575, -1.1031622583354121, -0.52240170772619465, -0.20733976224340095, 0.44847325772805158, -0.73058949328559097, -0.28212148650302366},
	  {2.8405039208331599, 1.4674791800123939, 2.8298484295696436, -0.37669356066468551, -0.79991105909165672, -0.018651439292631425, 0.4667937260813797, 2.8690232342535187, -0.35676308059737272, -0.27045747441906026, 0.19124623688477829, 0.78555172406022289, 0.14017825421769631},
	  {-0.17819151901072214, -0.56875685654131358, 2.7250666098637453, -0.65390747290464835, 0.23380593451541021, 0.14461918222650863, 0.70485820843412783, -2.2558326015604022, -1.7344375876902334, -0.69054061430057667, -1.3736317180031576, 2.5738675497634222, -0.7423513858072277},
	  {1.1708501643967921, -0.53813071462720397, 2.9967745561549788, -0.69490954184172837, 0.60652191143499046, -0.33219253063130466, -0.19718017699387172, -1.3384547537597364, -0.87311588710566745, -4.9539037483791821, 1.2487439540114924, -1.3824408658972385, -1.0072564452594355},
	  {-0.5195561167459708, 1.4314108785099691, 3.4954568756157052, -0.70876773801304294, 0.69824129026749615, 0.099828211835201616, -0.011904715000493001, -1.7664604769648364, -0.76646700346677332, -0.33547368432200453, 0.38278977061413272, -0.74629319601245381, -0.14816368486752171},
	  {1.372994849885746, 1.519397443336767, 2.92735163061915, 0.16751798601565143, 0.44410898345632216, 0.58678471108511754, -0.65604011920873195, -0.56926734272952773, 0.33379171946801484, -4.0138644609024956, -0.0095796947899990676, -2.2296684467925991, 0.55437693633027818},
	  {0.035510490991043385, 0.10401329697629016, 3.4772814352577921, 0.50577571337619642, 0.41141700335443865, 0.26226610252825894, -0.71143760694405955, 0.052668547294654318, 0.41753107114460652, -3.278004129649315, -2.004550364836482, 1.9845633824826829, 0.022687173478719042},
	  {2.3937192155954001, -0.56443767958699143, 3.8497530104602777, -0.2086716628437687, -0.7827254535171102, 0.50268924959770667, 0.30182862667637311, -0.062234762417985617, -2.755177989618995, -2.8550167904725412, 2.7983161176996836, -1.9881962686060131, -0.60289136934693033},
	  {-0.19265251009169199, 2.5714508850113469, 4.2626834177515436, -0.26750004482727552, 0.619290766250853, -0.71258273617525658, -0.19273950544406265, 0.12380696501067895, 2.1236109154476801, -2.4005698123387589, -2.1172760691917984, 2.1158232057629776, 0.24109765935357641},
	  {1.2001637159343539, 2.0094478356618035, 4.1168647921310688, -0.12539997081355803, 0.87989685415567032, -0.25695574827281209, -0.37951299950920392, -2.5428700408154845, 0.47882942603665091, -3.664146759286349, -0.054920676045741572, -0.26260778860249284, -0.028557816470067512},
	 }},
	{1, /* RAIN_SEED=6, speculative approach, step 236: the edge turned back by a landing (8.5e-3 m before, 7.7e-4 m with the separating points alone, 3.3e-6 m with the end regions as well) */
	 {
	  {-0.2426573401698808, 0.35601939367433583, 0.49999999999439088, 0.51077368999235806, 0.48898899537540713, -0.51077369001332418, 0.4889889953807891, 9.3097957612403091e-13, 3.3406618447158865e-12, 3.7955906790579768e-12, 8.5793017593912935e-13, -9.0790097024358833e-12, 7.7803964006569339e-12},
	  {2.4708084950227129, 0.12756913023117089, 0.49999999701913772, -0.64564257823638271, 0.6456426064979538, 0.28834987583033567, -0.28834984819041443, 1.6195961165629477e-33, 1.0405475993478889e-33, -4.2189185640247547e-23, 9.6972656624652339e-18, 1.7986341055108166e-17, 4.3254917923543476e-33},
	  {0.049805645028887541, 2.1850107290802767, 0.68539198900993059, -0.85402695980501364, 0.48551105103112557, 0.092349509233981081, -0.16244549669689329, -0.047971071799025385, 0.12153719783338508, -0.033150199611549955, -0.17732512560260111, -0.069990711053302915, 4.3231648182935989e-08},
	  {2.5659645467310042, 2.2058343739183623, 0.55968535340117331, 0.056750757668189072, 0.88639664138768892, -0.45849548508753191, -0.029363851843044707, 0.18784820574292246, 0.13296785580211121, 0.17771084907200296, -0.23750418625813591, 0.33566034087890562, -4.7500574963814423e-05},
	  {-0.52241080922752303, -0.8582167621540836, 0.49999999999999972, -0.52556663728433284, -0.52556663728433295, 0.47305360137476848, 0.47305360137476876, 5.6595602356066571e-36, -2.5625705619588614e-33, -3.1554436208840472e-30, 3.3316757701344626e-17, 4.9797812747167499e-19, 4.7753442109431415e-34},
	  {1.0276908620093943, -1.014133866677061, 0.49999999991927785, 0.20133372224300827, -0.67783827908727234, 0.20133371987625651, 0.67783827933554297, -1.070808575863784e-13, -8.2356609747930841e-13, 6.9681655522134372e-14, 5.6948355354880458e-12, -6.8709253589816687e-13, 6.2952089236616696e-13},
	  {0.22263704622860403, 1.309405997749314, 1.3804602927802583, 0.28656690435827731, 0.0074194030568158122, -0.83980452040575082, 0.46103441226318642, 0.05028638928930166, -0.0028336358796797936, -0.55075975876312022, 0.19386014752610015, -0.93261246180370438, -0.046824597290209345},
	  {1.3632145412427037, 3.2952214706185288, 0.4999999738296303, 0.67521593967446947, -0.20996065043289061, 0.675215890238962, 0.20996061927925133, -2.6252328811866086e-07, 3.923202515149285e-08, 1.7181530093925583e-06, -6.6478685944092589e-06, -4.4732410421604588e-06, 1.7243813389259559e-06},
	  {-0.01977986186443683, -2.0712089349602012, 0.49999999999999978, -0.15547580472978048, -0.68980234425785136, -0.1554758047297804, 0.68980234425785136, 1.638753296441208e-34, -6.5864730127125084e-33, 0, 1.1526772179858725e-16, 1.9039871902818806e-17, 5.6222333934174117e-32},
	  {1.3153223543644692, 1.7394063580461234, 0.50060920322656877, -0.12809204164564, -0.12894001932958274, -0.69525118963818866, -0.69540828553377343, 0.27886278108845952, -0.035362280705483896, 0.20584598075889426, 0.14733107342547039, 0.38496007593471637, -0.13346532000393183},
	  {1.1314377666159872, 1.8937790507586507, 1.6915765757459384, -0.21155226263177732, -0.45315284815570384, 0.51434321859770138, 0.69667007246350565, -0.52302025706282518, 1.212271057733143, -1.2500992807315243, -2.1189091866785161, -1.6429353402046787, -0.041179338798130183},
	  {2.9431237507885126, 2.3104986027980909, 1.5205597130687116, -0.062504059681127391, -0.39483331553173073, 0.91652814239363467, -0.013268747871309534, 0.51038965139900272, 0.36113776344636567, 0.026232365754235695, -0.23745831486181795, 0.33568637564550091, -5.1413285278283137e-05},
	  {-1.7961307367113797, 1.1116804226270134, 0.49999999999999983, -0.021785817503430328, 0.7067710931806046, -0.021785817503429863, -0.70677109318060527, 2.6194360087924972e-34, 4.6430060109918356e-33, -8.8746851837363828e-31, 6.8793081733972629e-17, 1.0698449674184908e-17, 2.5543228725727425e-32},
	  {0.9289163270728612, -0.91662171074422238, 1.499999978896658, 0.73518580152437796, 1.1143378979043503e-08, 1.6367138579185282e-08, 0.67786564836769647, -8.5558073873870084e-13, -6.5805815872831179e-12, 5.5717798248740333e-13, 5.6948198784410549e-12, -6.8715022200304183e-13, 6.2952089253420176e-13},
	  {1.3397329249343037, 2.8125359566662844, 2.5485672217334043, 0.61829308804125926, 0.73641317125537076, -0.16974192891626674, -0.21586332724619239, 0.21369604317439495, 1.2616892823078605, -1.4143552670017174, -3.9410439900826466, -1.0314191522647216, 0.050488984546119636},
	  {1.5218596450509478, 3.1614321797380525, 1.4999999736817888, -0.75746989452001856, 6.7115283624251447e-08, 4.2030017074376178e-08, -0.65287009343040492, 0.065231940249164816, 0.40685842170157671, 3.4246529672432337e-06, -8.5992531102966787e-06, -2.870575512631382e-06, -0.76299220635262033},
	  {1.1129891775405594, 1.0614081984500299, 2.4511136202119159, 0.66930593033412245, -0.3853084278683031, 0.38427211223904495, 0.50586750319483287, 0.28542117758036462, 1.4367410994569243, -1.9312708903548961, 0.54127710633771198, 2.5217541240812364, -0.13059043209107976},
	  {1.1538201284113287, 0.099578055338079438, 2.0059241904332072, 0.17557793802873778, -0.91123713945366946, -0.029501976110985928, 0.37141472340689119, 0.12360684757686866, 0.45960014403203248, -2.126423868338418, -0.98211598743492357, 0.59013782917481994, 0.0017489984740950832},
	  {2.6011535734462621, 1.7846264447213258, 2.6550415082877628, -0.0077428493209356899, -0.11990225362454866, -0.74434300382992968, -0.65689952847416877, 0.099199622124338124, -0.20095765792794931, -1.2803206680673178, 1.7115211118532905, -1.404284028669907, -0.33466923285829053},
	  {5.1005730861742213, 1.2912704469890994, 0.50000000000000033, -9.9362620872242342e-14, 0.78994513764276497, -0.61317752691578109, 1.9421127234183386e-13, 0.068812833383914362, -0.34700289501875542, 9.1429574843964861e-22, 1.3257605827015628e-21, 1.757671405348635e-21, -0.14354216355141083},
	 }},
	{1, /* RAIN_SEED=7, speculative approach, step 38: a pair 1.2e-2 m deep at t0 (3.6e-2 m after the step before and with the separating points alone; 4.6e-5 m with the end regions) */
	 {
	  {0.46292379878198503, 0.47769113427420512, 0.66476251585867652, 0.058222430364667628, 0.072169376450895245, -0.57049047418146714, -0.81605290794980034, 0.94940444171940352, 1.3491530778792487, -1.3482696042629092, -2.9300709527970419, 0.58702720521969054, -1.4758419311138791},
	  {1.9974646873953792, -0.11402357664983856, 0.50000000233676356, 0.30814150814099706, 0.30814133962907808, 0.63643457969067296, 0.63643440474737489, -4.4730112833982807e-11, 7.8556029774944532e-11, 2.4446136380937942e-10, -4.9348992790644818e-10, -2.2584424855172129e-10, -1.7722180043055891e-11},
	  {-0.18249327011544561, 1.7840297485340157, 0.50000000000000044, -4.2969225710216557e-13, -0.66468756935568563, -0.74712143266274378, 5.9516593706949241e-12, 0.24240011825977745, 0.29002370402103023, 2.0384655027372458e-09, 2.6404583088244673e-08, -6.6372788678590235e-09, 0.41555048623174773},
	  {2.0891404035138668, 1.894305936067576, 0.57488745669528241, 0.62552108824684682, -0.62440841280402792, -0.36944542344687398, 0.28696268271710024, 0.42118054395616911, 1.0365439507203835, -1.3859604457401173, -3.3278570563257839, 1.6560693072346684, -0.52059702896898696},
	  {0.051622665198124057, -0.053355741324404383, 1.7204597261293022, -0.53209201399732553, 0.030090389135034149, 0.62326283353926903, 0.57229022134802698, -0.1512155470487494, -0.4691216678367181, -2.5111587814072514, 1.2275192852201953, 2.8631112231324427, 0.48597469229909074},
	  {1.9622478104767451, -0.11278098316128847, 1.8420916672714616, -0.15763460881837932, -0.66212762333566744, -0.58840500502933901, -0.43648355132233901, -0.45979073968705586, 0.83464674572643749, -0.22880122479826645, -0.99113470718742724, -0.54605454601318115, -0.00021018092928808024},
	  {0.14898503651927208, 1.7820336097234979, 1.6347375, -0.50648237348366776, -0.43454803327421299, 0.5228292474245696, -0.53037080440510898, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {2.0182603677850928, 2.2127580807007874, 1.6893743702975692, 0.59315799078074849, -0.55176827216476099, 0.44955972183781534, 0.37631293932891269, 0.13358600726326103, 0.42788038557447933, -4.6822658754397413, 3.622753401409188, 1.1126579726030208, -0.68265934538849915},
	  {0.061247121982854841, -0.17550653833751173, 3.6347375, -0.37090192950280954, 0.65454335167823197, -0.65330457756560056, 0.08484037008848766, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {1.896101817074402, -0.16491248385838206, 3.6347375, -0.64716721470113159, 0.68592647387617278, -0.098348715973268525, -0.31781598247757936, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {0.067265964615056781, 1.8145198180143254, 3.6347375, 0.058124646864171021, -0.32985714143887979, -0.30196428978327511, -0.89254319747806521, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {2.0249549505433575, 2.0723419755072894, 3.6347375, 0.54508766085179805, 0.37418741086751722, -0.32905191653336902, 0.6742314585964494, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {-0.14777659466098081, -0.19866668889377329, 5.6347375, 0.50534560034290577, -0.57934191754756059, -0.42352877121206184, 0.47917861674117368, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {2.0873074953449664, 0.060215942219509939, 5.6347375, 0.60601464817987749, 0.77873251586652847, 0.11054034784441019, 0.11875498483029213, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {-0.24711192246372543, 1.7693872031548254, 5.6347375, -0.44620061467197863, -0.89396342990846855, 0.029355465262240359, -0.029540719555767394, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {1.8399434214422221, 2.1588123593421051, 5.6347375, 0.79588343876503642, -0.2125166958823046, 0.092944603360537184, -0.55925620834905465, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {0.14166398639995426, 0.21236326767929339, 7.6347374999999982, -0.64854835842269443, -0.13551683102704179, -0.019754195632379987, 0.74875228684160589, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {1.877244228365806, -0.086267421744837328, 7.6347374999999982, 0.4842609224048352, 0.3951906546375436, -0.58245261198001241, 0.51967745796448495, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {0.23602082152634307, 1.7760161537379193, 7.6347374999999982, 0.66383105552048072, 0.042655815022009824, 0.24052118798401839, -0.70686517052555997, 0, 0, -6.0495000000000001, 0, 0, 0},
	  {1.8952873324758224, 1.6630144049861912, 7.6347374999999982, -0.069174131250033938, 0.55480844564420395, -0.7716705605946298, 0.3031947791754257, 0, 0, -6.0495000000000001, 0, 0, 0},
	 }},
	{1, /* RAIN_SEED=3, speculative approach, step 39 (2.6e-2 m before and with the separating points alone; 8.5e-6 m with the end regions) */
	 {
	  {0.21047597922128489, 0.46466285946208824, 0.57611671905901007, 0.62672169214878448, -0.56361453982437193, 0.42701130018683198, -0.32744453057193856, -0.16638001781408848, 1.2123125304070661, -1.2860543365163035, -2.8367462255812241, -1.3388364667673023, -1.1085662840910138},
	  {1.9329035724564552, 0.0073330425468901769, 0.49999999999944822, -0.01905877638187432, 0.70684988720582176, 0.019058776381915665, 0.7068498872057396, 2.0798728874057552e-18, -3.7395672916066033e-19, 8.750796268522154e-18, -3.3498809947328571e-17, 2.0553309585930211e-16, 6.4003326196676772e-18},
	  {-0.067293337483767077, 2.2650526957390427, 0.55236485773613153, -0.67630398477367548, 0.045294640528997003, -0.73253309583083848, -0.062901345224764621, -1.1808244706946478, 0.47931406636005236, -2.004132181987988, -0.073507211166059711, -3.740863973795943, -0.34740128383884766},
	  {1.8829149076945517, 2.0254518635498862, 0.50240242496273291, -0.44922815854314885, 0.4518456232315356, -0.54390027307046651, 0.54607882882630499, -0.47936169077005869, -0.28598178714039452, -0.07618473712029733, 0.1504797354688133, -0.028745449109582166, -0.76439010965036847},
	  {-0.19793954533147393, 0.12867481017948756, 1.6314784673413563, -0.046193160453383092, 0.11780228547444771, 0.75505801062618039, -0.64333211800248213, -0.23180304766250423, 0.31976132670709123, -4.6095049626985851, 4.0692755564496741, 2.5843639912994729, 0.038421749460936197},
	  {1.7669787080654598, -0.15169447597366204, 1.8434088113638603, 0.46466794349786539, -0.81090155455248936, -0.17626169035475414, -0.30895661123061563, -0.36314026174558478, -0.80838651918513371, -0.20659895275455847, 0.95834038584453962, -0.43085815628307828, 0.0013937469644056065},
	  {-0.12692622315495644, 1.897549459746811, 1.6121482413380914, 0.62790006442984481, -0.48856854743150901, -0.45057272515335933, 0.40500185542480832, -0.48737156113659724, 0.17678744651009215, -4.6210351732381696, -1.601644383001982, 3.4000381472767081, -0.86790861342943459},
	  {1.6319665232628084, 1.7916041347993543, 1.7533962704770196, 0.80892258188732746, 0.43182508637183548, -0.25711508569856567, -0.30506259029732929, 0.45787024865988363, -1.6524638084308667, -1.1363726448402935, 2.3099821809539196, 0.99576725651754461, 0.12025230688825246},
	  {0.22101547387382831, -0.23513546337725227, 3.5325500000000001, -0.5506550742506966, -0.47559054347153401, -0.5057344022946717, 0.46349254416663682, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {1.6335424730128736, -0.15467257917524946, 3.5325500000000001, 0.54842682484610139, -0.43903254584753038, 0.53782428724426024, -0.46607239515558463, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {0.009114793238336704, 2.1125392447277487, 3.5325500000000001, 0.014070824314086933, -0.17080217753445426, -0.27433959289940479, 0.94623803338293255, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {1.8286969576424361, 2.1119350635769605, 3.5325500000000001, 0.18126957743582117, -0.64748496343858097, -0.022595580963984473, -0.73986079916297653, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {-0.094502760351405493, -0.22220228318297158, 5.5325499999999996, 0.14597814579648519, -0.034083565749155643, -0.95174208469654487, -0.26779786353352031, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {1.8049983426436795, -0.14962200144113913, 5.5325499999999996, 0.19262549733319151, -0.34540886312363472, -0.90678820116421255, -0.14602497485755825, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {-0.20442263984782147, 1.7231299737130794, 5.5325499999999996, 0.87517422185605875, -0.018618123124036511, -0.46299612422505598, 0.13913315867382858, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {1.9252167348099676, 1.7495268592556921, 5.5325499999999996, -0.30820980284145549, -0.40915291520613045, 0.79190414877533044, 0.33239799723099378, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {0.15609112876914774, -0.20819558495052237, 7.5325499999999979, 0.134169315032581, -0.20358667982141246, -0.92170718787064165, 0.30167352971478234, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {1.6672365155034332, -0.11593446892466121, 7.5325499999999979, -0.75490008040684997, 0.14932833583657354, -0.49292379300065181, -0.40602099824006854, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {-0.24785867645189374, 1.6306855335034616, 7.5325499999999979, 0.52482316658053119, -0.55276645425132465, 0.30801335998534629, 0.56933088880311045, 0, 0, -6.2130000000000001, 0, 0, 0},
	  {1.7731591475031698, 2.0758636326779314, 7.5325499999999979, -0.31546976252148584, 0.65424136772208452, -0.043918462193966279, 0.68594331425730126, 0, 0, -6.2130000000000001, 0, 0, 0},
	 }},
};

static void test_rain_snapshots(void** state)
{
	(void)state;
	for (size_t i = 0; i < sizeof SNAPSHOTS / sizeof SNAPSHOTS[0]; ++i) {
		const RainSnapshot* S = &SNAPSHOTS[i];
		g_spec = S->spec != 0;
		ibWorldId w = bench_world_toi(8);
		for (int k = 0; k < 20; ++k) {
			const double* c = S->cube[k];
			cube(w, ibV3(c[0], c[1], c[2]), (ibQuat){c[3], c[4], c[5], c[6]}, ibV3(c[7], c[8], c[9]), ibV3(c[10], c[11], c[12]));
		}
		double before = deepest(w);
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		double after = deepest(w);
		printf("rain snapshot %zu: deepest pair %.3e m before the step, %.3e m after it\n", i, before, after);
		assert_true(after <= EPS_D + EPS_C);
		ibDestroyWorld(w);
	}
	g_spec = false;
}

static int rain_pile_ex(int maxToiSubsteps, double bound, double lateBound)
{
	ibWorldId w = bench_world_toi(maxToiSubsteps);
	ibBodyId b[MAX_CUBES];
	int n = 0;
	/* RAIN_SEED=N (N > 1) runs the piles from another random start (the seed study of docs/contacts.md,
	 * "Box piles at 60 Hz" item 11); without it, the seed of the bounds */
	const char* seed = getenv("RAIN_SEED");
	rng_state = 0x9e3779b97f4a7c15u * ((seed ? strtoull(seed, NULL, 10) : 1u) + g_seedOffset);
	for (int k = 0; k < 5; ++k)
		for (int c = 0; c < 4; ++c) {
			/* a cube that would start inside one of its neighbours is drawn again (seeds 2 and 12 of the seed
			 * study had two cubes 9.5 cm into each other at t = 0; the test's own seed has none) */
			for (int tries = 0;; ++tries) {
				assert_true(tries < 100);
				ibVec3 p = ibV3(1.9 * (c % 2) + 0.3 * (2 * urand() - 1), 1.9 * (c / 2) + 0.3 * (2 * urand() - 1), 1.5 + 2.0 * k);
				ibQuat q = {urand() - 0.5, urand() - 0.5, urand() - 0.5, urand() - 0.5};
				b[n] = cube(w, p, ibQuatNormalize(q), ibV3(0, 0, 0), ibV3(0, 0, 0));
				if (!(deepest(w) > 0.0)) break;
				assert_int_equal(ibDestroyBody(b[n]), IB_OK);
			}
			++n;
		}
	double worst = 0.0, worstLate = 0.0, worstResting = 0.0, worstRestingCut = 0.0, minZ = INFINITY, e0 = energy(b, n), gain = -INFINITY;
	int resims = 0;
	g_sweeps = 0;
	g_stalled = 0;
	g_velocityCut = 0;
	const ibContactSettings cset = ibWorld_GetSolverSettings(w).contact;
	for (int k = 0; k < 240; ++k) {
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		resims += ibWorld_GetCollisionStats(w).toiIterations;
		ibStepStats st = ibWorld_GetStepStats(w);
		g_sweeps += st.collisionIterations + st.contactIterations + st.contactVelocityIterations;
		if (st.converged) /* a converged step has no residual left; a loop that ended early reports its own */
			assert_true(st.collisionResidual == 0.0 && st.contactResidual == 0.0 && st.contactVelocityResidual == 0.0);
		else if (st.contactVelocityResidual > 0.0)
			++g_velocityCut;
		/* a loop that ended before its cap without converging stalled; the step says so */
		if (!st.converged && st.collisionIterations < cset.maxCollisionIterations &&
		    st.contactIterations < cset.maxContactIterations && st.contactVelocityIterations < cset.maxContactIterations)
			++g_stalled;
		double d = deepest(w);
		worst = fmax(worst, d);
		if (k >= 180) worstLate = fmax(worstLate, d);
		if (k >= 180) {
			double r = deepest_of(w, true);
			if (st.converged) worstResting = fmax(worstResting, r);
			else worstRestingCut = fmax(worstRestingCut, r);
		}
		gain = fmax(gain, energy(b, n) - e0);
	}
	for (int i = 0; i < n; ++i) minZ = fmin(minZ, ibBody_GetPosition(b[i]).z);
	printf("rain of %d cubes, maxToiSubsteps %d%s: deepest penetration %.3e m (all pairs, 4 s), %.3e m in the 4th second; between resting "
	       "bodies (< 0.1 m/s, 0.1 rad/s) in it %.3e m after converged steps, %.3e m after the others; largest energy gain %.3e J (of %.1f J); "
	       "lowest centre %.6f m; %d re-simulations\n",
	       n, maxToiSubsteps, g_spec ? ", speculative approach" : "", worst, worstLate, worstResting, worstRestingCut, gain, e0, minZ, resims);
	assert_true(worst <= bound);                     /* was 0.47 m */
	assert_true(worstLate <= lateBound);             /* cubes still slide off the pile at 4 s */
	assert_true(worstResting <= EPS_D + EPS_C);      /* the bound where bodies rest, after converged steps */
	assert_true(worstRestingCut <= 10.0 * (EPS_D + EPS_C)); /* after steps whose loops stalled (anytime results) */
	assert_true(gain <= 1e-6 * e0);                  /* e = 0: the cubes only lose energy */
	assert_true(minZ >= 0.5 - EPS_D - EPS_C);        /* no cube in the ground */
	ibDestroyWorld(w);
	return resims;
}

/* The 4th-second bound over all pairs (cubes still sliding off the pile) is chaotic: the same run
 * with eps_d scaled by 0.9 ... 1.1, or the regularisation of the direct solve changed by 1e-7
 * relative, gave 2.9e-5 ... 3.3e-3 m (docs/contacts.md, masked sweeps). 5e-3 m bounds that spread;
 * the bound, eps_d + eps_c between resting bodies, is asserted separately and is not. */
static int rain_pile(int maxToiSubsteps, double bound) { return rain_pile_ex(maxToiSubsteps, bound, 5e-3); }

static void test_rain_pile(void** state)
{
	(void)state;
	g_spec = false;
	rain_pile(8, 0.05);
}

/* ibCollisionSettings.speculativeApproach: the approaching slow inelastic pairs are speculative
 * contacts (collisions at t0 down to the approach that closes their gap) instead of time-of-contact
 * searches; deeper while tumbling (6.1 cm; over seeds 1.9-7.5 cm against 0.7-5 cm with the
 * search), as good at rest, and a fraction of the re-simulations of the whole world. */
static void test_rain_pile_speculative_approach(void** state)
{
	(void)state;
	g_spec = false;
	int withToi = rain_pile(8, 0.05);
	g_spec = true;
	int withSpec = rain_pile_ex(8, 0.05, 5e-3);
	g_spec = false;
	printf("re-simulations: %d with the time-of-contact search, %d with the speculative approach\n", withToi, withSpec);
	assert_true(4 * withSpec < withToi);
}

/* No time-of-contact sub-steps at all: the approaching pairs are speculative contacts in every step
 * (contact_speculative.c); deeper while tumbling (5.5 cm), as good at rest, about 3.5x faster. Cubes
 * still tumble at 4-5 m/s in the 4th second, and without the search they sink there as in the first
 * seconds: with eps_d scaled by 0.9 ... 1.1 the 4th second's deepest pair was 5.6e-4 ... 2.7e-2 m
 * (session 30), over RAIN_SEED 1-16 at most 4.1e-3 m before session 35, and 5.6e-3 m (seed 6) in one of the
 * variants of its active set tried (1.7e-4 m with the one kept), so its bound is the tumbling one; between
 * resting bodies the bound holds as above. */
static void test_rain_pile_speculative(void** state)
{
	(void)state;
	rain_pile_ex(0, 0.1, 0.05);
}

/* Stalled loops (ibContactSettings.stallSweeps, docs/contacts.md): in the tumbling pile some loops
 * cycle without converging (sliding friction); ending them when their largest impulse per sweep has
 * not halved for 50 sweeps keeps every bound of the pile (asserted in rain_pile_ex) with fewer sweeps
 * than running them to the cap, and each such step is reported not converged. */
static void test_rain_pile_stall(void** state)
{
	(void)state;
	g_spec = false;
	long capped = 0, stalled = 0;
	int early = 0, cut = 0;
	/* summed over two starts (the seed and the next): the runs with and without the rule part after the first
	 * early end, and one pile's totals are chaotic. With a variant of session 35's contact changes seeds 6 and 16
	 * of 1-16 alone took 1 and 6 % more sweeps with the rule (the others 2-48 % fewer); with the changes kept,
	 * every pair (s, s + 1) of s = 1-16 takes fewer. */
	for (g_seedOffset = 0; g_seedOffset < 2; ++g_seedOffset) {
		g_stall = 0;
		rain_pile(8, 0.05);
		capped += g_sweeps;
		g_stall = 50;
		rain_pile(8, 0.05);
		stalled += g_sweeps;
		early += g_stalled;
		cut += g_velocityCut;
	}
	g_seedOffset = 0;
	g_stall = -1;
	printf("contact sweeps over the pile: %ld run to the cap, %ld with stallSweeps 50 (%d steps ended early, not converged; "
	       "%d with a velocity residual)\n",
	       capped, stalled, early, cut);
	assert_true(early > 0);
	assert_true(cut > 0); /* some of them in the velocity loop at t0+h, which says how far it got */
	assert_true(stalled < capped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tilted_landing), cmocka_unit_test(test_rocking_cube), cmocka_unit_test(test_rain_snapshots),
	    cmocka_unit_test(test_rain_pile),
	    cmocka_unit_test(test_rain_pile_stall),
	    cmocka_unit_test(test_rain_pile_speculative),
	    cmocka_unit_test(test_rain_pile_speculative_approach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
