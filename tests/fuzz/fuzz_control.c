// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's control-socket request line (daemon/): what any local
 * client allowed on the socket may send. A request that parses must say
 * the same thing once formatted and parsed again, with a session name
 * that is safe as a directory name.
 */
#include "fuzz_input.h"
#include "daemon/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_request rq, again;
	char err[256], line[CONTROL_MAX_LINE + 64];
	char *s;

	if (size > CONTROL_MAX_LINE)
		return 0;	/* the server reads one line of at most this */
	s = fuzz_string(data, size);
	memset(&rq, 0xa5, sizeof(rq));
	if (!control_parse_request(s, &rq, err, sizeof(err))) {
		if (!memchr(rq.session, 0, sizeof(rq.session)))
			abort();
		if (rq.session[0] && !control_valid_session(rq.session))
			abort();	/* a name the logdir must not get */
		if (control_format_request(&rq, line, sizeof(line)))
			abort();
		line[strcspn(line, "\n")] = '\0';
		if (control_parse_request(line, &again, err, sizeof(err)) ||
		    again.duration_ns != rq.duration_ns ||
		    again.at_realtime_ns != rq.at_realtime_ns || strcmp(again.session, rq.session))
			abort();	/* formatting changed the request */
	}
	free(s);
	return 0;
}
