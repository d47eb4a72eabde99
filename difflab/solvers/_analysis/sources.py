"""What an analysis runs on: a model, or the model another analysis result was made with."""


def model_of(source):
    """The model to analyse: ``source`` itself when it is a model, else the model of an
    analysis result (a branch of equilibria or orbits, a curve of folds or Hopf points,
    e.g. one read back from a session file). A session's record of a model is built
    where DiffLab may build it (a built-in or equations model, or a user model loaded
    from its file); another user model's record is refused in one line that says how to
    build it."""
    if hasattr(source, "vector_field"):
        return source
    model = getattr(source, "model", source)
    if not hasattr(model, "vector_field") and hasattr(model, "build"):
        try:
            model = model.build()
        except ValueError as error:
            if getattr(model, "origin", None) != "user":
                raise ValueError(f"the result's model cannot be rebuilt: {error}") from None
            name = str(model.class_name).rsplit(".", 1)[-1]
            raise ValueError(
                f"the {type(source).__name__}'s model {name} is a user model, which "
                f"DiffLab never runs from a file: pass it in built, e.g. "
                f"result.model.build(model={name}())") from None
    if not hasattr(model, "vector_field"):
        raise TypeError(f"expected a model or an analysis result with its model, got "
                        f"{type(source).__name__}")
    return model
