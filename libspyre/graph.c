// SPDX-License-Identifier: MIT
/*
 * Graphs: a capturing stream appends nodes here instead of submitting them.
 * Instantiating fixes the node list and the buffer list and encodes the
 * commands once; a replay copies them into the stream's command ring,
 * relocates the ring-relative addresses and submits them as one job.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct ref {
	const void *obj;
	enum spyre_kind kind;
	uint64_t id;
};

struct spyre_graph {
	struct spyre_obj obj;
	struct spyre_node *nodes;
	uint32_t nnodes, cap;
	struct ref *refs;		/* buffers and kernels the nodes use */
	uint32_t nrefs, refcap;
	uint32_t *bos;
	uint32_t nbos;
	spyre_status error;		/* first capture failure */
};

struct spyre_graph_exec {
	struct spyre_obj obj;
	atomic_int refs;
	struct spyre_node *nodes;
	uint32_t nnodes, nlaunches;
	struct ref *refs_list;
	uint32_t nrefs;
	uint32_t bos[SPYRE_JOB_MAX_BOS];
	uint32_t nbos;
	struct spyre_template tmpl;	/* the replay's slots, encoded once */
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

static spyre_status add_bo(struct spyre_graph *g, uint32_t handle)
{
	for (uint32_t i = 0; i < g->nbos; i++)
		if (g->bos[i] == handle)
			return SPYRE_SUCCESS;
	if (g->nbos >= SPYRE_JOB_MAX_BOS - 8)
		return spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				       "a graph may use at most %d buffers", SPYRE_JOB_MAX_BOS - 8);
	g->bos[g->nbos++] = handle;
	return SPYRE_SUCCESS;
}

spyre_status spyre_graph_capture_node(spyre_stream *s, const struct spyre_node *node,
				      const struct spyre_job *job, spyre_buffer *const *bufs,
				      int nbufs)
{
	struct spyre_graph *g = s->capture;
	spyre_status st = SPYRE_SUCCESS;
	uint32_t slots = 0;

	for (uint32_t i = 0; i < g->nnodes; i++)
		slots += 3 + spyre_node_data_slots(&g->nodes[i]);
	if (slots + 3 + spyre_node_data_slots(node) > SPYRE_JOB_MAX_SLOTS)
		st = spyre_set_error(SPYRE_ERROR_INVALID_ARGUMENT,
				     "the graph is full (%u command slots)", SPYRE_JOB_MAX_SLOTS);
	for (uint32_t i = 0; st == SPYRE_SUCCESS && i < job->nbos; i++)
		st = add_bo(g, job->bos[i]);
	if (st == SPYRE_SUCCESS && g->nnodes == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 16;
		struct spyre_node *n = realloc(g->nodes, cap * sizeof(*n));

		if (!n)
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph node");
		else
			g->nodes = n, g->cap = cap;
	}
	for (int i = 0; st == SPYRE_SUCCESS && i < nbufs; i++)
		if (add_ref(g, bufs[i], SPYRE_KIND_BUFFER, bufs[i]->obj.id))
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
	if (st == SPYRE_SUCCESS && node->kernel) {
		struct spyre_kernel *k = node->kernel;

		if (add_ref(g, k, SPYRE_KIND_KERNEL, k->obj.id))
			st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
		pthread_mutex_lock(&k->args_lock);
		for (uint32_t i = 0; st == SPYRE_SUCCESS && i < k->nargs; i++)
			if (k->arg_buf[i] &&
			    add_ref(g, k->arg_buf[i], SPYRE_KIND_BUFFER, k->arg_buf_id[i]))
				st = spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY,
						     "no memory for a graph");
		pthread_mutex_unlock(&k->args_lock);
	}
	if (st != SPYRE_SUCCESS) {
		if (g->error == SPYRE_SUCCESS)
			g->error = st;
		return st;
	}
	g->nodes[g->nnodes] = *node;
	g->nodes[g->nnodes].profile = NULL;	/* graph profiles come from the exec */
	if (node->kernel)
		atomic_fetch_add(&node->kernel->refs, 1);
	g->nnodes++;
	return SPYRE_SUCCESS;
}

static void put_nodes(struct spyre_node *nodes, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (nodes[i].kernel)
			spyre_kernel_put(nodes[i].kernel);
	free(nodes);
}

void spyre_graph_free_captured(struct spyre_graph *g)
{
	put_nodes(g->nodes, g->nnodes);
	free(g->refs);
	free(g->bos);
	free(g);
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
		g->bos = calloc(SPYRE_JOB_MAX_BOS, sizeof(*g->bos));
	if (!g || !g->bos) {
		free(g);
		return spyre_set_error(SPYRE_ERROR_OUT_OF_MEMORY, "no memory for a graph");
	}
	pthread_mutex_lock(&s->lock);
	if (s->capture)
		st = spyre_set_error(SPYRE_ERROR_CAPTURE, "stream %u is already capturing",
				     s->trace_tid);
	else
		s->capture = g;
	pthread_mutex_unlock(&s->lock);
	if (st != SPYRE_SUCCESS)
		spyre_graph_free_captured(g);
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
	g = s->capture;
	s->capture = NULL;
	pthread_mutex_unlock(&s->lock);
	if (!g)
		return spyre_set_error(SPYRE_ERROR_CAPTURE, "stream %u is not capturing",
				       s->trace_tid);
	if (g->error != SPYRE_SUCCESS) {
		/* A failed capture would replay wrong work: refuse the graph. */
		st = g->error;
		spyre_graph_free_captured(g);
		return spyre_set_error(st, "an operation failed during the capture; the graph "
				       "was discarded");
	}
	spyre_device_link(s->obj.dev, &g->obj, SPYRE_KIND_GRAPH);
	*graph = g;
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_graph_destroy(spyre_graph *graph)
{
	spyre_status st;

	if (!graph)
		return spyre_done(SPYRE_SUCCESS);
	st = spyre_handle_check(graph, SPYRE_KIND_GRAPH, "graph");
	if (st != SPYRE_SUCCESS)
		return st;
	spyre_device_unlink(&graph->obj);
	spyre_graph_free_captured(graph);
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT uint32_t spyre_graph_num_nodes(const spyre_graph *graph)
{
	return spyre_handle_live(graph, SPYRE_KIND_GRAPH, 0) ? graph->nnodes : 0;
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
		if (e->nodes[i].kernel)
			atomic_fetch_add(&e->nodes[i].kernel->refs, 1);
		e->nlaunches += e->nodes[i].kind == NODE_LAUNCH;
	}
	memcpy(e->refs_list, graph->refs, sizeof(*e->refs_list) * graph->nrefs);
	e->nrefs = graph->nrefs;
	memcpy(e->bos, graph->bos, sizeof(e->bos[0]) * graph->nbos);
	e->nbos = graph->nbos;
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
	pthread_mutex_init(&e->prof_lock, NULL);
	atomic_init(&e->refs, 1);
	spyre_device_link(graph->obj.dev, &e->obj, SPYRE_KIND_EXEC);
	*exec = e;
	return spyre_done(SPYRE_SUCCESS);
}

void spyre_exec_put(struct spyre_graph_exec *e)
{
	if (atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	put_nodes(e->nodes, e->nnodes);
	free(e->refs_list);
	free(e->profiles);
	spyre_template_free(&e->tmpl);
	pthread_mutex_destroy(&e->prof_lock);
	free(e);
}

spyre_launch_profile *spyre_exec_retire_begin(struct spyre_graph_exec *e, uint32_t *count)
{
	pthread_mutex_lock(&e->prof_lock);
	*count = e->nlaunches;
	return e->profiles;
}

void spyre_exec_retire_end(struct spyre_graph_exec *e, uint32_t written)
{
	if (written)
		e->have_profiles = 1;
	pthread_mutex_unlock(&e->prof_lock);
}

SPYRE_EXPORT spyre_status spyre_graph_exec_destroy(spyre_graph_exec *exec)
{
	spyre_status st;

	if (!exec)
		return spyre_done(SPYRE_SUCCESS);
	st = spyre_handle_check(exec, SPYRE_KIND_EXEC, "graph exec");
	if (st != SPYRE_SUCCESS)
		return st;
	spyre_device_unlink(&exec->obj);
	spyre_exec_put(exec);	/* queued replays hold their own references */
	return spyre_done(SPYRE_SUCCESS);
}

SPYRE_EXPORT spyre_status spyre_graph_launch(spyre_graph_exec *exec, spyre_stream *s)
{
	spyre_status st = spyre_handle_check(exec, SPYRE_KIND_EXEC, "graph exec");
	struct spyre_job job;

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
					       exec->refs_list[i].kind == SPYRE_KIND_KERNEL ?
					       "kernel" : "buffer");
	pthread_mutex_lock(&s->lock);
	st = spyre_stream_enter(s, 0);
	if (st == SPYRE_SUCCESS) {
		spyre_job_init(&job);
		memcpy(job.bos, exec->bos, sizeof(job.bos[0]) * exec->nbos);
		job.nbos = exec->nbos;
		job.nodes = exec->nodes;
		job.nnodes = exec->nnodes;
		job.tmpl = &exec->tmpl;
		job.exec = exec;
		atomic_fetch_add(&exec->refs, 1);
		st = spyre_stream_submit(s, &job, NULL);
		if (st != SPYRE_SUCCESS)
			spyre_exec_put(exec);
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
