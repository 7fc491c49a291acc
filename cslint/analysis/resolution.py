"""Names across the tree: which function a typed reference
(:mod:`cslint.analysis.atoms`) calls, the class hierarchy (bases, overrides,
families of classes sharing fields) and what each field of ``self`` holds.

Resolution is by name and structure only; an attribute call on an unknown
receiver resolves when exactly one method of the tree has that name.
"""

from __future__ import annotations

from typing import Optional

from .atoms import name_ref


class Resolver:
    """The functions and classes of the analysed files, by key and by
    dotted name; resolves references to the functions they may call."""

    def __init__(self, files: list):
        self.files = files
        self.funcs: dict = {}
        self.classes: dict = {}
        self.modules: dict = {}
        self.funcs_by_qual: dict = {}
        self.classes_by_qual: dict = {}
        self.methods_by_name: dict = {}
        for ff in self.files:
            self.modules[ff.module] = ff
            for fn in ff.functions:
                self.funcs[fn.key] = fn
                self.funcs_by_qual[f"{fn.module}.{fn.qualname}"] = fn
            for cls in ff.classes:
                self.classes[cls.key] = cls
                self.classes_by_qual[f"{cls.module}.{cls.key.split(':', 1)[1]}"] = cls
                for name, fkey in cls.methods.items():
                    self.methods_by_name.setdefault(name, []).append(fkey)
        self._bases: dict = {}
        self._subclasses: dict = {}
        for cls in self.classes.values():
            resolved = []
            for ref in cls.bases:
                base = self.class_of_ref(ref)
                if base is not None:
                    resolved.append(base.key)
                    self._subclasses.setdefault(base.key, []).append(cls.key)
            self._bases[cls.key] = resolved
        self._family = {}
        for key in self.classes:
            self._family[key] = self._find_family(key)
        self.field_types: dict = {}
        for fn in self.funcs.values():
            for variant in fn.variants.values():
                for class_key, attr, ref in variant.field_types:
                    cls = self.class_of_ref(ref)
                    if cls is not None:
                        self.field_types.setdefault((self.family(class_key), attr), set()).add(cls.key)
        self._resolve_cache: dict = {}

    # -- classes -----------------------------------------------------------------
    def _lookup_qual(self, table: dict, dotted: str, depth: int = 0):
        found = table.get(dotted)
        if found is not None or depth > 3 or "." not in dotted:
            return found
        # re-exports: `pkg.Name` where pkg/__init__ imports Name from elsewhere
        module, _, name = dotted.rpartition(".")
        for split in range(dotted.count("."), 0, -1):
            parts = dotted.split(".")
            mod = ".".join(parts[:split])
            rest = parts[split:]
            ff = self.modules.get(mod)
            if ff is not None and rest and rest[0] in ff.imports:
                target = ".".join([ff.imports[rest[0]]] + rest[1:])
                if target != dotted:
                    return self._lookup_qual(table, target, depth + 1)
        return None

    def class_of_ref(self, ref):
        """The class a reference names (``class``/``qual``), or None."""
        if ref is None:
            return None
        if ref.tag == "class":
            return self.classes.get(ref.key)
        if ref.tag == "qual":
            return self._lookup_qual(self.classes_by_qual, ref.dotted)
        return None

    def _find_family(self, key: str) -> str:
        seen = set()
        stack = [key]
        root = key
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            root = min(root, k)
            stack.extend(self._bases.get(k, ()))
        # the family is named by its smallest root-most member; subclasses
        # join the family of their bases
        roots = [k for k in seen if not self._bases.get(k)]
        return min(roots) if roots else root

    def family(self, class_key: Optional[str]) -> Optional[str]:
        """The key naming a class's family: a class and its bases share fields."""
        if class_key is None:
            return None
        return self._family.get(class_key, class_key)

    def mro(self, class_key: str) -> list:
        out, seen = [], set()
        stack = [class_key]
        while stack:
            k = stack.pop(0)
            if k in seen:
                continue
            seen.add(k)
            out.append(k)
            stack.extend(self._bases.get(k, ()))
        return out

    def lookup_method(self, class_key: str, name: str, include_overrides: bool = True) -> list:
        """The method ``name`` of a class (through its bases) and, with
        ``include_overrides``, every override in its subclasses."""
        found = []
        for k in self.mro(class_key):
            cls = self.classes.get(k)
            if cls is not None and name in cls.methods:
                fkey = cls.methods[name]
                if fkey in self.funcs:
                    found.append(self.funcs[fkey])
                break
        if include_overrides:
            stack = list(self._subclasses.get(class_key, ()))
            seen = set()
            while stack:
                k = stack.pop()
                if k in seen:
                    continue
                seen.add(k)
                cls = self.classes.get(k)
                if cls is not None and name in cls.methods and cls.methods[name] in self.funcs:
                    fn = self.funcs[cls.methods[name]]
                    if fn not in found:
                        found.append(fn)
                stack.extend(self._subclasses.get(k, ()))
        return found

    def resolve(self, ref) -> list:
        """The functions a call through ``ref`` may run ([FuncFacts])."""
        if ref is None:
            return []
        try:
            return self._resolve_cache[ref]
        except KeyError:
            pass
        except TypeError:  # unhashable (should not happen)
            return []
        out: list = []
        tag = ref.tag
        if tag == "func":
            fn = self.funcs.get(f"{ref.module}:{ref.qualname}")
            out = [fn] if fn else []
        elif tag == "qual":
            fn = self._lookup_qual(self.funcs_by_qual, ref.dotted)
            out = [fn] if fn else []
            if not out:
                cls = self._lookup_qual(self.classes_by_qual, ref.dotted)
                if cls is not None:
                    out = self.lookup_method(cls.key, "__init__", include_overrides=False)
        elif tag == "method":
            out = self.lookup_method(ref.class_key, ref.name)
        elif tag == "super":
            for base in self._bases.get(ref.class_key, ()):
                out = self.lookup_method(base, ref.name, include_overrides=False)
                if out:
                    break
        elif tag == "fieldmethod":
            types = self.field_types.get((self.family(ref.class_key), ref.attr), ())
            for cls_key in sorted(types):
                for fn in self.lookup_method(cls_key, ref.name):
                    if fn not in out:
                        out.append(fn)
            if not types:
                out = self.resolve(name_ref(ref.name))
        elif tag == "class":
            out = self.lookup_method(ref.key, "__init__", include_overrides=False)
        elif tag == "name":
            candidates = self.methods_by_name.get(ref.name, [])
            if len(candidates) == 1 and candidates[0] in self.funcs:
                out = [self.funcs[candidates[0]]]
        self._resolve_cache[ref] = out
        return out
