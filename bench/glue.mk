# bench/glue.mk: builds the glue schemagen generated into GEN as a static library, with the
# dependency files the compiler writes, so that a rebuild compiles only what an edit touched
# (bench/run codegen: codegen_compile_s, codegen_incremental_s).
#
#   make -f bench/glue.mk GEN=DIR OBJ=DIR RUNTIME=runtime SCHEMA=gen/schema [CC=cc] -j N
GEN     ?= gen
OBJ     ?= obj
CC      ?= cc
CFLAGS  ?= -std=c11 -O2
SRCS    := $(wildcard $(GEN)/*.c)
OBJS    := $(SRCS:$(GEN)/%.c=$(OBJ)/%.o)

$(OBJ)/libglue.a: $(OBJS)
	ar rcs $@ $(OBJS)

$(OBJ)/%.o: $(GEN)/%.c | $(OBJ)
	$(CC) $(CFLAGS) -MMD -MP -I$(GEN) -I$(RUNTIME) -I$(SCHEMA) -c $< -o $@

$(OBJ):
	mkdir -p $@

-include $(OBJS:.o=.d)
