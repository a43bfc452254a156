/* Engine lookup by the name given to --engine. */
#include <string.h>
#include "initiator/engine.h"

const struct engine_ops *engine_find(const char *name)
{
	static const struct engine_ops *const all[] = {
		&engine_native, &engine_libiscsi, &engine_local,
	};
	size_t i;

	if (!name)
		return &engine_native;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
