// SPDX-License-Identifier: MIT
/*
 * Graphs: a capturing stream appends nodes here instead of submitting them.
 * Instantiating fixes the node list and the buffer list and encodes the
 * commands once; a replay copies them into the stream's command ring,
 * relocates the ring-relative addresses and submits them as one job.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "spyre_cmd.h"
#include "stream.h"

struct ref {
	const void *obj;
	enum spyre_kind kind;
	uint64_t id;
};

struct spyre_graph {
	struct spyre_obj obj;
	struct spyre_capture capture;	/* while the stream captures into it */
	struct spyre_node *nodes;
	uint32_t nnodes, cap;
	struct ref *refs;		/* buffers and kernels the nodes use */
	uint32_t nrefs, refcap;
	struct spyre_bo_list *bos;
	spyre_status error;		/* first capture failure */
};

/* Replays of one exec that can be queued without copying the template. */
#define SPYRE_EXEC_PLACED	2

struct spyre_graph_exec {
	struct spyre_obj obj;
	atomic_int refs;
	struct spyre_node *nodes;
	uint32_t nnodes, nlaunches;
	struct ref *refs_list;
	uint32_t nrefs;
	struct spyre_bo_list bos;
	struct spyre_template tmpl;	/* the replay's slots, encoded once */
	/* The template placed in buffers of the exec's own, so a replay
	 * copies nothing into a ring (one with every one busy does). */
	struct spyre_placed placed[SPYRE_EXEC_PLACED];
	uint32_t nplaced;
	pthread_mutex_t prof_lock;
	spyre_launch_profile *profiles;	/* per launch, last completed replay */
	int have_profiles;
};

static int add_ref(struct spyre_graph *g, const void *obj, enum spyre_kind kind, uint64_t id)
{
	for (uint32_t i = 0; i < g->nrefs; i++)
		if (g->refs[i].obj == obj && g->refs[i].id == id)
			return 0;
	if (g->nrefs == g->refcap) {
		uint32_t cap = g->refcap ? g->refcap * 2 : 16;
		struct ref *r = realloc(g->refs, cap * sizeof(*r));

		if (!r)
			return -1;
		g->refs = r;
		g->refcap = cap;
	}
	g->refs[g->nrefs++] = (struct ref){ obj, kind, id };
	return 0;
}

static struct spyre_graph *graph_of(struct spyre_capture *cap)
{
	return (struct spyre_graph *)((char *)cap - offsetof(struct spyre_graph, capture));
}

/* Room for one more node of @node's size, and its slot in g->nodes. */
static spyre_status reserve_node(struct spyre_graph *g, const struct spyre_node *node)
{
	uint32_t slots = 0;

	for (uint32_t i = 0; i < g->nnodes; i++)
		slots += 3 + spyre_node_data_slots(&g->nodes[i]);
	if (slots + 3 + spyre_node_data_slots(node) > SPYRE_JOB_MAX_SLOTS)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the graph is full (%u command slots)", SPYRE_JOB_MAX_SLOTS);
	if (g->nnodes == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 16;
		struct spyre_node *n = realloc(g->nodes, cap * sizeof(*n));

		if (!n)
			return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY,
					       "no memory for a graph node");
		g->nodes = n;
		g->cap = cap;
	}
	return SPYRE_SUCCESS;
}

/* A capturing stream's submission: its node, buffers and objects join the graph. */
static spyre_status capture_add(struct spyre_capture *cap, const struct spyre_submission *sub)
{
	struct spyre_graph *g = graph_of(cap);
	const struct spyre_node *node = sub->nodes;
	spyre_status st = reserve_node(g, node);
	uint64_t *sg = NULL;

	/* A strided copy's list is the caller's until the call returns: the
	 * graph keeps its own until instantiation has encoded it. */
	if (st == SPYRE_SUCCESS && node->kind == NODE_COPY_SG) {
		sg = malloc(sizeof(*sg) * 3 * node->nsg);
		if (sg)
			memcpy(sg, node->sg, sizeof(*sg) * 3 * node->nsg);
		else
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
	}

	for (uint32_t i = 0; st == SPYRE_SUCCESS && i < sub->bos.count; i++)
		st = spyre_bo_list_add(g->bos, sub->bos.handles[i], "graph");
	for (uint32_t i = 0; st == SPYRE_SUCCESS && i < sub->nuses; i++)
		if (add_ref(g, sub->uses[i], sub->uses[i]->kind, sub->uses[i]->id))
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
	if (st != SPYRE_SUCCESS) {
		free(sg);
		if (g->error == SPYRE_SUCCESS)
			g->error = st;
		return st;
	}
	/* The program stays; the caller's profile does not: a replay is not that call. */
	g->nodes[g->nnodes] = *node;
	g->nodes[g->nnodes].sg = sg;
	g->nodes[g->nnodes].caller = (struct spyre_owner){ NULL, NULL };
	spyre_owner_get(&node->program);
	g->nnodes++;
	return SPYRE_SUCCESS;
}

static void put_nodes(struct spyre_node *nodes, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		spyre_node_put(&nodes[i]);
	free(nodes);
}

static void graph_free(struct spyre_graph *g)
{
	for (uint32_t i = 0; i < g->nnodes; i++)
		free((void *)g->nodes[i].sg);
	put_nodes(g->nodes, g->nnodes);
	free(g->refs);
	free(g->bos);
	free(g);
}

/* The stream went away while capturing. */
static void capture_discard(struct spyre_capture *cap)
{
	graph_free(graph_of(cap));
}

static void graph_destroy_obj(struct spyre_obj *obj)
{
	spyre_graph_destroy((spyre_graph *)obj);
}

static void exec_destroy_obj(struct spyre_obj *obj)
{
	spyre_graph_exec_destroy((spyre_graph_exec *)obj);
}

SPYRE_EXPORT spyre_status spyre_stream_begin_capture(spyre_stream *s)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	struct spyre_graph *g;

	if (st != SPYRE_SUCCESS)
		return st;
	if (s->internal)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "internal stream");
	g = calloc(1, sizeof(*g));
	if (g)
		g->bos = calloc(1, sizeof(*g->bos));
	if (!g || !g->bos) {
		free(g);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
	}
	g->capture.add = capture_add;
	g->capture.discard = capture_discard;
	pthread_mutex_lock(&s->lock);
	if (s->capture)
		st = spyre_set_error(SPYRE_ERROR_CAPTURE, "stream %u is already capturing",
				     s->trace_tid);
	else
		s->capture = &g->capture;
	pthread_mutex_unlock(&s->lock);
	if (st != SPYRE_SUCCESS)
		graph_free(g);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_stream_end_capture(spyre_stream *s, spyre_graph **graph)
{
	spyre_status st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	struct spyre_graph *g;

	if (st != SPYRE_SUCCESS)
		return st;
	if (!graph)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "graph pointer is NULL");
	*graph = NULL;
	pthread_mutex_lock(&s->lock);
	g = s->capture ? graph_of(s->capture) : NULL;
	s->capture = NULL;
	pthread_mutex_unlock(&s->lock);
	if (!g)
		return spyre_set_error(SPYRE_ERROR_CAPTURE, "stream %u is not capturing",
				       s->trace_tid);
	if (g->error != SPYRE_SUCCESS) {
		/* A failed capture would replay wrong work: refuse the graph. */
		st = g->error;
		graph_free(g);
		return spyre_set_error(st, "an operation failed during the capture; the graph "
				       "was discarded");
	}
	spyre_device_link(s->obj.dev, &g->obj, SPYRE_KIND_GRAPH, graph_destroy_obj);
	*graph = g;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_graph_destroy(spyre_graph *graph)
{
	spyre_status st;

	if (!spyre_handle_unlink(graph, SPYRE_KIND_GRAPH, "graph", &st))
		return st;
	graph_free(graph);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT uint32_t spyre_graph_num_nodes(const spyre_graph *graph)
{
	return spyre_handle_live(graph, SPYRE_KIND_GRAPH, 0) ? graph->nnodes : 0;
}

/*
 * Place the template in the exec's own buffers.  Without them (no memory
 * for them) replays copy it into the stream's ring, as they do when every
 * placed copy is busy: slower, not an error.
 */
static void exec_place(spyre_device *dev, struct spyre_graph_exec *e)
{
	for (; e->nplaced < SPYRE_EXEC_PLACED; e->nplaced++) {
		struct spyre_placed *p = &e->placed[e->nplaced];

		if (spyre_gem_create(dev, (uint64_t)e->tmpl.slots * SPYRE_CMD_SIZE, 0, &p->gem) !=
		    SPYRE_SUCCESS) {
			spyre_log(SPYRE_LOG_DEBUG, "graph exec: %u placed copies (%s)", e->nplaced,
				  spyre_last_error_detail());
			break;
		}
		spyre_template_place(&e->tmpl, p->gem.map, p->gem.va);
		atomic_init(&p->busy, 0);
	}
}

/* A placed copy no replay uses, taken; NULL if every one is busy. */
static struct spyre_placed *exec_take_placed(struct spyre_graph_exec *e)
{
	for (uint32_t i = 0; i < e->nplaced; i++)
		if (!atomic_exchange(&e->placed[i].busy, 1))
			return &e->placed[i];
	return NULL;
}

SPYRE_EXPORT spyre_status spyre_graph_instantiate(spyre_graph *graph, spyre_graph_exec **exec)
{
	spyre_status st = spyre_handle_check(graph, SPYRE_KIND_GRAPH, "graph");
	spyre_graph_exec *e;

	if (st != SPYRE_SUCCESS)
		return st;
	if (!exec)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "exec pointer is NULL");
	*exec = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph exec");
	/* An empty graph still replays one (no-op) node, so it can be waited for. */
	e->nnodes = graph->nnodes ? graph->nnodes : 1;
	e->nodes = calloc(e->nnodes, sizeof(*e->nodes));
	e->refs_list = calloc(graph->nrefs ? graph->nrefs : 1, sizeof(*e->refs_list));
	if (!e->nodes || !e->refs_list) {
		free(e->nodes);
		free(e->refs_list);
		free(e);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph exec");
	}
	if (graph->nnodes) {
		memcpy(e->nodes, graph->nodes, sizeof(*e->nodes) * graph->nnodes);
	} else {
		e->nodes[0].kind = NODE_MARK;
		e->nodes[0].name = "empty graph";
	}
	for (uint32_t i = 0; i < graph->nnodes; i++) {
		spyre_owner_get(&e->nodes[i].program);
		e->nlaunches += e->nodes[i].kind == NODE_LAUNCH;
	}
	memcpy(e->refs_list, graph->refs, sizeof(*e->refs_list) * graph->nrefs);
	e->nrefs = graph->nrefs;
	memcpy(e->bos.handles, graph->bos->handles, sizeof(e->bos.handles[0]) * graph->bos->count);
	e->bos.count = graph->bos->count;
	e->profiles = calloc(e->nlaunches ? e->nlaunches : 1, sizeof(*e->profiles));
	st = e->profiles ? spyre_template_build(&e->tmpl, e->nodes, e->nnodes) :
			   spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph exec");
	if (st != SPYRE_SUCCESS) {
		put_nodes(e->nodes, e->nnodes);
		free(e->refs_list);
		free(e->profiles);
		free(e);
		return st;
	}
	/* Encoded into the template: the lists stay the graph's. */
	for (uint32_t i = 0; i < e->nnodes; i++)
		e->nodes[i].sg = NULL;
	exec_place(graph->obj.dev, e);
	pthread_mutex_init(&e->prof_lock, NULL);
	atomic_init(&e->refs, 1);
	spyre_device_link(graph->obj.dev, &e->obj, SPYRE_KIND_EXEC, exec_destroy_obj);
	*exec = e;
	return spyre_done(SPYRE_SUCCESS);
}

static void exec_get(void *ctx)
{
	struct spyre_graph_exec *e = ctx;

	atomic_fetch_add(&e->refs, 1);
}

static void exec_put(void *ctx)
{
	struct spyre_graph_exec *e = ctx;

	if (atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	put_nodes(e->nodes, e->nnodes);
	free(e->refs_list);
	free(e->profiles);
	for (uint32_t i = 0; i < e->nplaced; i++)
		spyre_gem_destroy(e->obj.dev, &e->placed[i].gem);
	spyre_template_free(&e->tmpl);
	pthread_mutex_destroy(&e->prof_lock);
	free(e);
}

/* A replay retiring: its launches' profiles go into the exec's array under
 * the profile lock, held from begin to end so a reader sees one replay. */
static void exec_retire_begin(void *ctx)
{
	struct spyre_graph_exec *e = ctx;

	pthread_mutex_lock(&e->prof_lock);
}

static void exec_launch_retired(void *ctx, uint32_t index, const spyre_launch_profile *p)
{
	struct spyre_graph_exec *e = ctx;

	if (index < e->nlaunches)
		e->profiles[index] = *p;
}

static void exec_retire_end(void *ctx, uint32_t launches)
{
	struct spyre_graph_exec *e = ctx;

	if (launches)
		e->have_profiles = 1;
	pthread_mutex_unlock(&e->prof_lock);
}

static const struct spyre_owner_ops exec_owner_ops = {
	.get = exec_get,
	.put = exec_put,
	.launch_retired = exec_launch_retired,
	.retire_begin = exec_retire_begin,
	.retire_end = exec_retire_end,
};

SPYRE_EXPORT spyre_status spyre_graph_exec_destroy(spyre_graph_exec *exec)
{
	spyre_status st;

	if (!spyre_handle_unlink(exec, SPYRE_KIND_EXEC, "graph exec", &st))
		return st;
	exec_put(exec);	/* queued replays hold their own references */
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_graph_launch(spyre_graph_exec *exec, spyre_stream *s)
{
	spyre_status st = spyre_handle_check(exec, SPYRE_KIND_EXEC, "graph exec");
	struct spyre_submission sub;

	if (st == SPYRE_SUCCESS)
		st = spyre_handle_check(s, SPYRE_KIND_STREAM, "stream");
	if (st != SPYRE_SUCCESS)
		return st;
	if (exec->obj.dev != s->obj.dev)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "the graph was captured on another device than the stream's");
	for (uint32_t i = 0; i < exec->nrefs; i++)
		if (!spyre_handle_live(exec->refs_list[i].obj, exec->refs_list[i].kind,
				       exec->refs_list[i].id))
			return spyre_set_error(SPYRE_ERROR_INVALID_HANDLE,
					       "a %s the graph uses was freed",
					       spyre_kind_name(exec->refs_list[i].kind));
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 0);
	if (st == SPYRE_SUCCESS) {
		spyre_submission_init(&sub);
		memcpy(sub.bos.handles, exec->bos.handles,
		       sizeof(sub.bos.handles[0]) * exec->bos.count);
		sub.bos.count = exec->bos.count;
		sub.nodes = exec->nodes;
		sub.nnodes = exec->nnodes;
		sub.tmpl = &exec->tmpl;
		if (!s->capture)
			sub.placed = exec_take_placed(exec);
		sub.owner = (struct spyre_owner){ &exec_owner_ops, exec };
		spyre_owner_get(&sub.owner);
		st = spyre_stream_queue(s, &sub, NULL);
	}
	pthread_mutex_unlock(&s->lock);
	return spyre_done(st);
}

SPYRE_EXPORT spyre_status spyre_graph_exec_profile(spyre_graph_exec *exec, uint32_t launch_index,
						   spyre_launch_profile *profile)
{
	spyre_status st = spyre_handle_check(exec, SPYRE_KIND_EXEC, "graph exec");

	if (st != SPYRE_SUCCESS)
		return st;
	if (!profile)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT, "profile is NULL");
	if (launch_index >= exec->nlaunches)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "launch %u of a graph with %u launches", launch_index,
				       exec->nlaunches);
	pthread_mutex_lock(&exec->prof_lock);
	if (exec->have_profiles)
		*profile = exec->profiles[launch_index];
	else
		st = spyre_set_error(SPYRE_ERROR_NOT_READY, "no replay has completed yet");
	pthread_mutex_unlock(&exec->prof_lock);
	return spyre_done(st);
}
